"""Database faults answer 503 ``database-unavailable``, never a 500, and lose or double nothing.

The service runs as in production (``kafka-purge serve``, executor included) on a PostgreSQL database of
its own, with a cluster "demo" on a 3-broker Kafka emulator process.

1. Backends terminated under API load: several clients drive a mix of the API's routes (token, health,
   readiness, deletions submitted, previewed, listed and read, approval rules and webhooks written,
   policies created, the audit trail read) while another task terminates every backend of the service's
   database, over and over. Every request answers as it would without faults (0 x 5xx), every accepted
   deletion is stored exactly once with one ``deletion.requested`` event, and the audit chain verifies.
2. The database closed to connections (``ALLOW_CONNECTIONS false``, its backends terminated): every
   route that needs it answers 503 problem+json of type ``database-unavailable`` with Retry-After,
   saying nothing internal; the database URL's password is in no answer and no log line; once the
   database takes connections again the same process answers as before.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from helpers.databases import PG_ADMIN_DSN
from helpers.service_processes import (
    CLIENT,
    SECRET,
    Database,
    Service,
    database_url,
    emulator_process,
    produce,
    service_env,
    start_service,
)
from sqlalchemy import func, select

from app.adapters.db.models import AuditEvent, Deletion
from app.adapters.db.session import read_session

pytestmark = pytest.mark.slow

TOPIC = "orders"
CLIENTS = 6
ROUNDS = 5
RECORDS = ROUNDS + 10
TERMINATE_EVERY_ANSWERS = 20
PASSWORD = "db-password-d8f3a1"  # the test's own: trust authentication ignores it
TERMINATE = (
    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
    " WHERE datname = $1 AND pid <> pg_backend_pid()"
)


@asynccontextmanager
async def running_service(tmp_path: Path) -> AsyncIterator[tuple[Service, str, str]]:
    """The service on a database of its own (its URL with a password); the service, URL, database name."""
    with emulator_process(tmp_path, TOPIC, CLIENTS) as emulator:
        await produce(emulator.bootstrap, TOPIC, CLIENTS, RECORDS)
        async with database_url("postgresql", tmp_path) as url:
            url = url.replace("postgres@", f"postgres:{PASSWORD}@")
            # 8 connections (2 x the pool size): the PostgreSQL server is shared with other tests.
            env = {**service_env(url, emulator.bootstrap), "PURGE_DATABASE_POOL_SIZE": "4"}
            service = start_service(env, tmp_path, log_level="INFO")
            try:
                yield service, url, url.rsplit("/", 1)[1]
            finally:
                service.process.kill()
                (tmp_path / "service.log").write_text("".join(service.process.lines))


async def terminate(name: str, progress: Counter[str], stop: asyncio.Event) -> int:
    """Terminate every backend of database ``name`` each time the clients have been answered
    ``TERMINATE_EVERY_ANSWERS`` more times (paced by the load, not the clock), until ``stop``; how many
    backends were terminated."""
    admin = await asyncpg.connect(PG_ADMIN_DSN)
    terminated, last = 0, 0
    try:
        while not stop.is_set():
            if progress["answers"] >= last + TERMINATE_EVERY_ANSWERS:
                last = progress["answers"]
                terminated += await admin.fetchval(TERMINATE, name)
            await asyncio.sleep(0.005)
    finally:
        await admin.close()
    return terminated


def deletion_body(client: int, round_: int, *, dry_run: bool = False) -> dict[str, Any]:
    partition = {"topic": TOPIC, "partition": client, "offset": round_ + 1}
    return {
        "cluster": "demo",
        "partitions": [partition],
        "reason": f"load {client}-{round_}",
        "dry_run": dry_run,
    }


async def one_round(
    http: httpx.AsyncClient, client: int, round_: int, progress: Counter[str]
) -> list[tuple[str, int, int]]:
    """One round of the mix: (what, expected status, answered status) for each request."""
    answers: list[tuple[str, int, int]] = []

    async def call(what: str, expected: int, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            response = await http.request(method, url, **kwargs)
        except httpx.TransportError:  # the server dropped the connection: no answer at all (0)
            response = httpx.Response(0)
        answers.append((what, expected, response.status_code))
        progress["answers"] += 1
        return response

    form = {"grant_type": "client_credentials"}
    await call("token", 200, "POST", "/oauth/token", data=form, auth=(CLIENT, SECRET))
    await call("healthz", 200, "GET", "/healthz")
    await call("readyz", 200, "GET", "/readyz")
    headers = {"Idempotency-Key": f"key-{client}-{round_}"} if round_ % 2 else {}
    accepted = await call(
        "submit", 202, "POST", "/v1/deletions", json=deletion_body(client, round_), headers=headers
    )
    await call("preview", 200, "POST", "/v1/deletions", json=deletion_body(client, round_ + 1, dry_run=True))
    await call("list deletions", 200, "GET", "/v1/deletions", params={"limit": 5})
    if accepted.status_code == 202:
        deletion = accepted.json()["id"]
        await call("read deletion", 200, "GET", f"/v1/deletions/{deletion}")
        await call("read partitions", 200, "GET", f"/v1/deletions/{deletion}/partitions")
    rules = "/v1/clusters/demo/approval-rules"
    rule = {
        "name": f"rule-{client}-{round_}",
        "topics": {"names": [f"held-{client}"]},
        "approvers": ["User:bob"],
    }
    await call("create rule", 201, "POST", rules, json=rule)
    await call("change rule", 200, "PATCH", f"{rules}/{rule['name']}", json={"expires_after_seconds": 3600})
    webhook = {"cluster": "demo", "url": f"https://hooks.example.com/{client}/{round_}", "enabled": False}
    await call("create webhook", 201, "POST", "/v1/webhooks", json=webhook)
    policy = {
        "name": f"policy-{client}-{round_}",
        "topics": {"names": [f"kept-{client}"]},
        "consumers": {"groups": ["billing"]},
        "enabled": False,
    }
    await call("create policy", 201, "POST", "/v1/clusters/demo/policies", json=policy)
    await call("read audit", 200, "GET", "/v1/audit", params={"limit": 5})
    await call("list approvals", 200, "GET", "/v1/approvals")
    await call("list webhooks", 200, "GET", "/v1/webhooks")
    return answers


async def drive(base: str, token: str, client: int, progress: Counter[str]) -> list[tuple[str, int, int]]:
    headers = {"Authorization": f"Bearer {token}"}
    answers: list[tuple[str, int, int]] = []
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as http:
        for round_ in range(ROUNDS):
            answers += await one_round(http, client, round_, progress)
    return answers


async def stored_deletions(db: Database) -> tuple[Counter[str], Counter[str]]:
    """How many times each load deletion's reason is stored, and how many ``deletion.requested`` events
    each deletion has."""
    async with read_session(db.sessionmaker) as session:
        reasons = (
            await session.execute(select(Deletion.reason).where(Deletion.reason.like("load %")))
        ).scalars()
        events = await session.execute(
            select(AuditEvent.deletion_id, func.count())
            .where(AuditEvent.action == "deletion.requested")
            .group_by(AuditEvent.deletion_id)
        )
        return Counter(reasons), Counter({str(deletion): int(count) for deletion, count in events.all()})


@pytest.mark.timeout(180)
async def test_terminated_backends_under_load_answer_no_5xx(tmp_path: Path) -> None:
    async with running_service(tmp_path) as (service, url, name):
        token = service.token()
        stop, progress = asyncio.Event(), Counter[str]()
        terminator = asyncio.create_task(terminate(name, progress, stop))
        try:
            results = await asyncio.gather(
                *(drive(str(service.base), token, c, progress) for c in range(CLIENTS))
            )
        finally:
            stop.set()
            terminated = await terminator
        answers = list(itertools.chain.from_iterable(results))
        statuses = Counter(status for _, _, status in answers)
        print(f"{len(answers)} requests, {terminated} backends terminated, statuses {dict(statuses)}")
        assert terminated >= 50, terminated
        unexpected = [answer for answer in answers if answer[1] != answer[2]]
        assert not unexpected, unexpected
        db = Database(url)
        try:
            reasons, requested = await stored_deletions(db)
            accepted = {f"load {c}-{r}" for c in range(CLIENTS) for r in range(ROUNDS)}
            assert reasons == Counter(accepted)
            assert set(requested.values()) == {1}
            assert await db.chain_ok()
        finally:
            await db.close()
        assert not [line for line in service.process.lines if "unhandled error" in line]


DATABASE_ROUTES = [
    ("GET", "/v1/deletions", None),
    ("GET", "/v1/deletions/{deletion}", None),
    ("GET", "/v1/deletions/{deletion}/partitions", None),
    ("POST", "/v1/deletions", deletion_body(0, 1)),
    ("POST", "/v1/deletions", deletion_body(0, 2, dry_run=True)),
    ("POST", "/v1/deletions/{deletion}/cancel", None),
    ("GET", "/v1/clusters/demo/approval-rules", None),
    (
        "POST",
        "/v1/clusters/demo/approval-rules",
        {"name": "r", "topics": {"names": ["t"]}, "approvers": ["User:b"]},
    ),
    ("GET", "/v1/clusters/demo/policies", None),
    ("GET", "/v1/approvals", None),
    ("GET", "/v1/webhooks", None),
    ("POST", "/v1/webhooks", {"cluster": "demo", "url": "https://hooks.example.com/x", "enabled": False}),
    ("GET", "/v1/audit", None),
    ("GET", "/v1/audit/verify", None),
    ("GET", "/v1/clusters/demo/acls", None),
]


@pytest.mark.timeout(180)
async def test_unreachable_database_answers_503_and_recovers(tmp_path: Path) -> None:
    async with running_service(tmp_path) as (service, _, name):
        headers = {"Authorization": f"Bearer {service.token()}"}
        async with httpx.AsyncClient(base_url=str(service.base), headers=headers, timeout=60) as http:
            created = await http.post("/v1/deletions", json=deletion_body(0, 0))
            assert created.status_code == 202, created.text
            deletion = created.json()["id"]
            admin = await asyncpg.connect(PG_ADMIN_DSN)
            closed_at = len(service.process.lines)
            try:
                await admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
                await admin.fetchval(TERMINATE, name)
                for method, path, body in DATABASE_ROUTES:
                    response = await http.request(method, path.format(deletion=deletion), json=body)
                    assert response.status_code == 503, (path, response.status_code, response.text)
                    assert response.headers["content-type"] == "application/problem+json"
                    assert response.headers["retry-after"].isdigit()
                    problem = response.json()
                    assert problem["type"].endswith("/database-unavailable")
                    assert PASSWORD not in response.text
                    assert "Traceback" not in response.text
                ready = await http.get("/readyz")
                assert (ready.status_code, ready.json()["database"]) == (503, "unreachable")
                # Liveness and metrics need no database (the backlog gauges keep their last values).
                assert (await http.get("/healthz")).status_code == 200
                assert (await http.get("/metrics")).status_code == 200
            finally:
                await admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true')
                await admin.close()
            # The outage is logged one line per fault (its class and SQLSTATE), by the API and the workers.
            outage = "".join(service.process.lines[closed_at:])
            assert "database unavailable" in outage
            assert "Traceback" not in outage
            for path in ("/v1/deletions", f"/v1/deletions/{deletion}", "/readyz"):
                assert (await http.get(path)).status_code == 200
        log = "".join(service.process.lines)
        assert "database fault" in log
        assert PASSWORD not in log
        assert "unhandled error" not in log
