# ruff: noqa: E501 - the matrix is a table, one route per line
"""Who may call what: every route of ``create_app()`` against every kind of caller, through HTTP, the real
database and the Kafka emulator (``security.world`` describes the principals and their bindings).

A route of the app without a row here fails (a new route needs a rule), and so does a row for a route the
app no longer has, or a route missing from the README's Authorization table. Runs on SQLite and
PostgreSQL (the lists are filtered after queries that differ between them); each world costs about 3 s.

Cells: the status each principal gets; for a list, LISTED or HIDDEN (200, with or without the owner's
resource). A 401 must carry a Bearer challenge; every 4xx must be problem+json.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from fastapi import FastAPI, routing
from helpers.databases import postgresql_database
from pydantic import SecretStr

from app.adapters.db.migrate import upgrade
from app.main import create_app
from app.settings import AuditSettings, AuthSettings, ClusterSettings, DatabaseSettings, Settings
from app.worker.scheduler import RetentionScheduler
from security.world import (
    CALLS,
    CLIENTS,
    CLUSTER,
    GROUP,
    HIDDEN,
    LISTED,
    POLICY,
    PRINCIPALS,
    PROTECTED,
    RULE,
    SIGNING_KEY,
    SPARK,
    TOPIC,
    World,
    acls,
    binding,
    build_call,
    consumers,
    outcome,
    policies,
    policy_body,
    rules,
)

IN_MODULE_LOOP = pytest.mark.asyncio(loop_scope="module")
README = Path(__file__).resolve().parents[2] / "README.md"
Cell = int | str
H, L = HIDDEN, LISTED


@dataclass(frozen=True)
class Row:
    method: str
    path: str
    anonymous: Cell
    stranger: Cell
    owner: Cell
    operator: Cell
    admin: Cell
    rule: str

    @property
    def expected(self) -> dict[str, Cell]:
        return {who: getattr(self, who) for who in PRINCIPALS}


# fmt: off
MATRIX = [
    #   method    path                                                          anon stranger owner oper admin  rule
    # Public: orchestrators, scrapers, documentation, and the dev issuer's own endpoints.
    Row("GET",    "/healthz",                                                   200, 200, 200, 200, 200, "public"),
    Row("GET",    "/readyz",                                                    200, 200, 200, 200, 200, "public"),
    Row("GET",    "/metrics",                                                   200, 200, 200, 200, 200, "public"),
    Row("GET",    "/openapi.json",                                              200, 200, 200, 200, 200, "public"),
    Row("GET",    "/docs",                                                      200, 200, 200, 200, 200, "public"),
    Row("GET",    "/docs/oauth2-redirect",                                      200, 200, 200, 200, 200, "public"),
    Row("GET",    "/redoc",                                                     200, 200, 200, 200, 200, "public"),
    Row("GET",    "/docs/assets/{path}",                                        200, 200, 200, 200, 200, "public"),
    Row("GET",    "/problems/{slug}",                                           200, 200, 200, 200, 200, "public"),
    Row("POST",   "/oauth/token",                                               401, 200, 200, 200, 200, "client credentials"),
    Row("GET",    "/.well-known/jwks.json",                                     200, 200, 200, 200, 200, "public"),
    Row("GET",    "/signing-keys",                                              200, 200, 200, 200, 200, "public"),
    # Deletions: DELETE on the topics to submit or cancel; seen by the requester or DESCRIBE on every topic.
    Row("POST",   "/v1/deletions",                                              401, 403, 202, 403, 202, "DELETE on every TOPIC"),
    Row("GET",    "/v1/deletions",                                              401,   H,   L,   H,   L, "requester or DESCRIBE on its topics"),
    Row("GET",    "/v1/deletions/{deletion_id}",                                401, 404, 200, 404, 200, "requester or DESCRIBE on its topics"),
    Row("POST",   "/v1/deletions/{deletion_id}/cancel",                         401, 404, 200, 404, 200, "seen, and DELETE on its topics"),
    Row("GET",    "/v1/deletions/{deletion_id}/partitions",                     401, 404, 200, 404, 200, "requester or DESCRIBE on its topics"),
    Row("GET",    "/v1/deletions/{deletion_id}/partitions/{topic}/{partition}", 401, 404, 200, 404, 200, "requester or DESCRIBE on its topics"),
    Row("GET",    "/v1/deletions/{deletion_id}/evidence",                       401, 404, 200, 404, 200, "requester or DESCRIBE on its topics"),
    Row("GET",    "/v1/deletions/{deletion_id}/certificate",                    401, 404, 200, 404, 200, "requester or DESCRIBE on its topics"),
    Row("GET",    "/v1/clusters/{cluster}/topics/{topic}",                      401, 403, 200, 403, 200, "DESCRIBE on the TOPIC"),
    # ACL bindings: ALTER on CLUSTER to change, DESCRIBE on CLUSTER to list.
    Row("POST",   "/v1/clusters/{cluster}/acls",                                401, 403, 403, 201, 201, "ALTER on CLUSTER"),
    Row("GET",    "/v1/clusters/{cluster}/acls",                                401, 403, 403, 200, 200, "DESCRIBE on CLUSTER"),
    Row("DELETE", "/v1/clusters/{cluster}/acls",                                401, 403, 403, 200, 200, "ALTER on CLUSTER"),
    # Consumers are Kafka groups: READ on GROUP:name to write, DESCRIBE on it to see.
    Row("POST",   "/v1/clusters/{cluster}/consumers",                           401, 403, 201, 403, 201, "READ on GROUP:name"),
    Row("GET",    "/v1/clusters/{cluster}/consumers",                           401,   H,   L,   H,   L, "DESCRIBE on GROUP:name"),
    Row("GET",    "/v1/clusters/{cluster}/consumers/{name}",                    401, 404, 200, 404, 200, "DESCRIBE on GROUP:name"),
    Row("PUT",    "/v1/clusters/{cluster}/consumers/{name}/progress",           401, 403, 200, 403, 200, "READ on GROUP:name and every TOPIC"),
    # Retention policies: DELETE on the topics and DESCRIBE on the groups to create; the owner or ALTER on
    # CLUSTER to change; the owner or whoever may describe it (DESCRIBE on CLUSTER) to see.
    Row("POST",   "/v1/clusters/{cluster}/policies",                            401, 403, 201, 403, 201, "DELETE on its topics, DESCRIBE on its groups"),
    Row("GET",    "/v1/clusters/{cluster}/policies",                            401,   H,   L,   L,   L, "owner or DESCRIBE on CLUSTER"),
    Row("GET",    "/v1/clusters/{cluster}/policies/{name}",                     401, 404, 200, 200, 200, "owner or DESCRIBE on CLUSTER"),
    Row("PATCH",  "/v1/clusters/{cluster}/policies/{name}",                     401, 404, 200, 200, 200, "owner or ALTER on CLUSTER"),
    Row("DELETE", "/v1/clusters/{cluster}/policies/{name}",                     401, 404, 204, 204, 204, "owner or ALTER on CLUSTER"),
    Row("GET",    "/v1/clusters/{cluster}/policies/{name}/runs",                401, 404,   L,   L,   L, "owner or DESCRIBE on CLUSTER"),
    # Four-eyes approval: rules are managed like ACL bindings; a decision needs being an approver of every
    # rule (never the requester) and DESCRIBE on the topics; a request is seen by whoever sees its
    # subject and by its approvers.
    Row("POST",   "/v1/clusters/{cluster}/approval-rules",                      401, 403, 403, 201, 201, "ALTER on CLUSTER"),
    Row("GET",    "/v1/clusters/{cluster}/approval-rules",                      401, 403, 403, 200, 200, "DESCRIBE on CLUSTER"),
    Row("GET",    "/v1/clusters/{cluster}/approval-rules/{name}",               401, 403, 403, 200, 200, "DESCRIBE on CLUSTER"),
    Row("PATCH",  "/v1/clusters/{cluster}/approval-rules/{name}",               401, 403, 403, 200, 200, "ALTER on CLUSTER"),
    Row("DELETE", "/v1/clusters/{cluster}/approval-rules/{name}",               401, 403, 403, 204, 204, "ALTER on CLUSTER"),
    Row("POST",   "/v1/deletions/{deletion_id}/approvals",                      401, 404, 403, 403, 200, "approver of every rule, not the requester, DESCRIBE on its topics"),
    Row("GET",    "/v1/deletions/{deletion_id}/approvals",                      401, 404, 200, 200, 200, "seeing the deletion, or an approver of its rules"),
    Row("GET",    "/v1/approvals",                                              401,   H,   H,   H,   L, "approver of every rule, not the requester, seeing the subject"),
    Row("POST",   "/v1/clusters/{cluster}/policies/{name}/approvals",           401, 404, 403, 403, 200, "approver of every rule, not the owner, DESCRIBE on its topics"),
    # Webhooks: ALTER on the webhook's CLUSTER to change one, DESCRIBE on it to see one.
    Row("POST",   "/v1/webhooks",                                               401, 403, 403, 201, 201, "ALTER on CLUSTER"),
    Row("GET",    "/v1/webhooks",                                               401,   H,   H,   L,   L, "DESCRIBE on CLUSTER"),
    Row("GET",    "/v1/webhooks/{webhook_id}",                                  401, 404, 404, 200, 200, "DESCRIBE on CLUSTER"),
    Row("PATCH",  "/v1/webhooks/{webhook_id}",                                  401, 404, 404, 200, 200, "ALTER on CLUSTER"),
    Row("DELETE", "/v1/webhooks/{webhook_id}",                                  401, 404, 404, 204, 204, "ALTER on CLUSTER"),
    Row("GET",    "/v1/webhooks/{webhook_id}/deliveries",                       401, 404, 404,   L,   L, "DESCRIBE on CLUSTER"),
    Row("POST",   "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry",   401, 404, 404, 202, 202, "ALTER on CLUSTER"),
    # The audit trail spans every cluster: DESCRIBE on CLUSTER of each.
    Row("GET",    "/v1/audit",                                                  401, 403, 403, 200, 200, "DESCRIBE on CLUSTER"),
    Row("GET",    "/v1/audit/verify",                                           401, 403, 403, 200, 200, "DESCRIBE on CLUSTER"),
    Row("GET",    "/v1/audit/export",                                           401, 403, 403, 200, 200, "DESCRIBE on CLUSTER"),
    Row("POST",   "/v1/audit/verify",                                           401, 403, 403, 200, 200, "DESCRIBE on CLUSTER"),
    Row("GET",    "/v1/audit/keys",                                             401, 403, 403, 200, 200, "DESCRIBE on CLUSTER"),
]
# fmt: on
ROWS = {(row.method, row.path): row for row in MATRIX}


def app_routes(app: FastAPI) -> set[tuple[str, str]]:
    """Every (method, path template) the app answers; HEAD only where it is not GET's shadow."""
    found = set()
    for route in routing.iter_route_contexts(app.routes):
        methods = set(route.methods or ())
        if "GET" in methods:
            methods.discard("HEAD")
        found.update((method, str(route.path)) for method in methods)
    return found


def readme_routes() -> set[tuple[str, str]]:
    """The ``METHOD /path`` cells of the README's Authorization table."""
    section = README.read_text().split("## Authorization", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {
        (method, path)
        for line in rows
        for method, path in re.findall(r"`(GET|POST|PUT|PATCH|DELETE) (/[^`\s]*)`", line.split("|")[1])
    }


def settings(url: str, bootstrap: str) -> Settings:
    return Settings(
        database=DatabaseSettings(url=url, pool_size=5),
        clusters={CLUSTER: ClusterSettings(bootstrap_servers=bootstrap, request_timeout_ms=5_000)},
        auth=AuthSettings(
            dev_issuer=True, dev_clients={client: SecretStr(secret) for client, secret in CLIENTS.items()}
        ),
        super_users="User:admin",
        audit=AuditSettings(signing_key=SecretStr(SIGNING_KEY)),
    )


async def setup_world(world: World, emulator: Any) -> None:
    """The bindings, then what the owner makes: a deletion, a group and a Spark consumer, a policy run."""
    from helpers.kafka_records import produce

    emulator.create_topic(TOPIC, partitions=2, replication_factor=1)
    await produce(emulator, TOPIC, {0: 10, 1: 10})
    grants = [
        binding("User:owner", operation="DELETE", resource_name="sec.", pattern_type="PREFIXED"),
        binding("User:owner", operation="READ", resource_name="sec.", pattern_type="PREFIXED"),
        binding(
            "User:owner",
            operation="READ",
            resource_type="GROUP",
            resource_name="sec-",
            pattern_type="PREFIXED",
        ),
        binding("User:operator", operation="ALTER", resource_type="CLUSTER", resource_name="kafka-cluster"),
        binding(
            "User:operator", operation="DESCRIBE", resource_type="CLUSTER", resource_name="kafka-cluster"
        ),
    ]
    for grant in grants:
        response = await world.client.post(acls(), json=grant, headers=world.headers("admin"))
        assert response.status_code == 201, response.text
    world.webhook_id = await world.new_webhook()
    world.deletion_id = await world.new_deletion()
    answer = await world.client.get(
        f"/v1/webhooks/{world.webhook_id}/deliveries", headers=world.headers("admin")
    )
    world.delivery_id = answer.json()["items"][0]["id"]
    await world.as_owner("POST", consumers(), 201, json={"name": GROUP, "kind": "kafka_group"})
    progress = {"query_id": "q-1", "run_id": "r-1", "batch_id": 0, "offsets": {TOPIC: {"0": 1}}}
    await world.as_owner("PUT", f"{consumers()}/{SPARK}/progress", 200, json=progress)
    await world.as_owner("POST", policies(), 201, json=policy_body(POLICY))
    await RetentionScheduler(world.app.state.runtime, instance_id="matrix").run_once()
    await protect(world, emulator)


async def protect(world: World, emulator: Any) -> None:
    """Topic sec.protected under the rule sec-rule, and a deletion of it awaiting approval."""
    from helpers.kafka_records import produce

    emulator.create_topic(PROTECTED, partitions=1, replication_factor=1)
    await produce(emulator, PROTECTED, {0: 10})
    rule = {
        "name": RULE,
        "topics": {"names": [PROTECTED]},
        "approvers": ["User:admin", "User:operator"],
    }
    response = await world.client.post(rules(), json=rule, headers=world.headers("admin"))
    assert response.status_code == 201, response.text
    world.protected_id = await world.new_protected_deletion()


@asynccontextmanager
async def database(kind: str, tmp: Path) -> AsyncIterator[str]:
    """A migrated database of that kind; a PostgreSQL one is dropped at the end of the session."""
    if kind == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp / 'matrix.db'}"
        await upgrade(url)
        yield url
        return
    async with postgresql_database("purge_matrix") as url:
        await upgrade(url)
        yield url


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["sqlite", "postgresql"])
async def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[World]:
    from kafka_emulator import EmulatedCluster

    emulator = EmulatedCluster(brokers=1)
    await emulator.start()
    try:
        async with database(request.param, tmp_path_factory.mktemp("matrix")) as url:
            app = create_app(settings(url, emulator.bootstrap), run_executor=False)
            async with app.router.lifespan_context(app):
                transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
                async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
                    built = World(app, client, await tokens(client))
                    await setup_world(built, emulator)
                    yield built
    finally:
        await emulator.stop()


async def tokens(client: httpx.AsyncClient) -> dict[str, str]:
    found = {}
    for who, secret in CLIENTS.items():
        answer = await client.post(
            "/oauth/token", data={"grant_type": "client_credentials"}, auth=(who, secret)
        )
        assert answer.status_code == 200, answer.text
        found[who] = str(answer.json()["access_token"])
    return found


@IN_MODULE_LOOP
async def test_every_route_has_a_row(world: World) -> None:
    routes = app_routes(world.app)
    assert routes - ROWS.keys() == set(), "routes without an authorization rule in MATRIX"
    assert ROWS.keys() - routes == set(), "MATRIX rows for routes the app does not have"
    assert CALLS.keys() - ROWS.keys() == set(), "calls built for routes the matrix does not know"


def test_the_readme_lists_every_route() -> None:
    documented = readme_routes()
    assert ROWS.keys() - documented == set(), "routes missing from the README's Authorization table"
    assert documented - ROWS.keys() == set(), "README rows for routes the matrix does not know"


@IN_MODULE_LOOP
@pytest.mark.parametrize("row", MATRIX, ids=[f"{row.method} {row.path}" for row in MATRIX])
async def test_route(world: World, row: Row) -> None:
    actual: dict[str, Cell] = {}
    for who in PRINCIPALS:
        call = await build_call(world, who, row.method, row.path)
        actual[who] = outcome(call, await world.send(who, call))
    assert actual == row.expected, f"{row.method} {row.path} ({row.rule})"


@IN_MODULE_LOOP
async def test_metrics_name_no_principal_or_resource(world: World) -> None:
    """/metrics is public: it may count requests, never say who sent them or on what."""
    text = (await world.client.get("/metrics")).text
    assert "# TYPE" in text
    # Principals by their names as a label value or a principal ("owner" alone is also part of the
    # sweep skip reason owner_not_authorized, which names no one).
    principals = [
        form for n in ("owner", "operator", "stranger", "admin") for form in (f'"{n}"', f"User:{n}")
    ]
    for secret in (*principals, TOPIC, GROUP, POLICY, world.deletion_id):
        assert secret not in text, f"/metrics mentions {secret!r}"


@IN_MODULE_LOOP
async def test_metrics_series_stay_bounded_for_anonymous_callers(world: World) -> None:
    """Anyone may call the service: no request of theirs may add a metrics series of its own choosing
    (each series lives for the life of the process, so that would grow memory and /metrics unbounded)."""
    invented = [f"PROBE{n}" for n in range(20)]
    for method in invented:
        await world.client.request(method, "/healthz")
        await world.client.request(method, f"/no-such-path-{method}")
    text = (await world.client.get("/metrics")).text
    assert [m for m in invented if m in text] == []
