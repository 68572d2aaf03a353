"""The audit trail over HTTP when it was tampered with, on SQLite and PostgreSQL: reads hide a row past
the head, verification reports it (and a deleted head row) instead of answering 500, a change that must
append after it answers 503 ``audit-chain-broken`` (not 500 or 409), checkpoints are checked when the
caller supplies one, and since/until take RFC 3339 date-times only."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from helpers.audit import append, hash_of, insert_sql, raw
from helpers.kafka_records import produce
from pydantic import SecretStr
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.checkpoints import CheckpointKey, generate_private_key
from app.main import create_app
from app.settings import AuditSettings, Settings
from app.worker.checkpointer import AuditCheckpointer

Sessions = async_sessionmaker[AsyncSession]
Tamper = Callable[[str], Awaitable[None]]
PROBLEM = "application/problem+json"
PRIVATE_KEY = generate_private_key()


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The shared settings with a checkpoint signing key."""
    audit = AuditSettings(signing_key=SecretStr(PRIVATE_KEY))
    return settings.model_copy(update={"audit": audit})


@pytest.fixture
def run_executor() -> bool:
    """Checkpoints are signed by the tests themselves, not by a background task racing them."""
    return False


@pytest.fixture
def super_users() -> str:
    """Only alice: bob is decided by ACL bindings, and has none."""
    return "User:alice"


@pytest.fixture
async def alice(token: Callable[[str], Awaitable[str]]) -> dict[str, str]:
    return {"Authorization": f"Bearer {await token('alice')}"}


def problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, Any] = response.json()
    return body


async def test_a_row_past_the_head_is_hidden_and_reported(
    app_client: httpx.AsyncClient, alice: dict[str, str], sessionmaker: Sessions, tamper: Tamper
) -> None:
    await append(sessionmaker, 2)
    await tamper(insert_sql(3, await hash_of(sessionmaker, 2)))
    listed = (await app_client.get("/v1/audit", headers=alice)).json()["items"]
    assert [event["id"] for event in listed] == [1, 2]
    exported = (await app_client.get("/v1/audit/export", headers=alice)).text.splitlines()
    assert len(exported) == 2
    verify = (await app_client.get("/v1/audit/verify", headers=alice)).json()
    assert (verify["ok"], verify["first_broken_id"], verify["head_event_id"]) == (False, 3, 2)
    assert "past the head" in verify["reason"]


async def test_changes_after_a_foreign_row_answer_503_audit_chain_broken(
    app_client: httpx.AsyncClient,
    alice: dict[str, str],
    sessionmaker: Sessions,
    tamper: Tamper,
    emulator: Any,
) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    await produce(emulator, "orders", {0: 5})
    await append(sessionmaker, 1)
    await tamper(insert_sql(2, await hash_of(sessionmaker, 1)))
    body = {
        "cluster": "demo",
        "partitions": [{"topic": "orders", "partition": 0, "offset": 2}],
        "reason": "x",
    }
    deletion = problem(await app_client.post("/v1/deletions", json=body, headers=alice), 503)
    assert deletion["type"] == "/problems/audit-chain-broken"
    binding = {
        "principal": "User:bob",
        "operation": "DELETE",
        "permission_type": "ALLOW",
        "resource_type": "TOPIC",
        "resource_name": "orders",
    }
    acl = problem(await app_client.post("/v1/clusters/demo/acls", json=binding, headers=alice), 503)
    assert acl["type"] == "/problems/audit-chain-broken"
    assert (await app_client.get("/v1/deletions", headers=alice)).json()["items"] == []
    assert (await app_client.get("/v1/clusters/demo/acls", headers=alice)).json()["items"] == []


async def test_a_deleted_head_row_is_reported_broken_not_500(
    app_client: httpx.AsyncClient, alice: dict[str, str], sessionmaker: Sessions
) -> None:
    await append(sessionmaker, 2)
    await raw(sessionmaker, "DELETE FROM audit_head")
    verify = await app_client.get("/v1/audit/verify", headers=alice)
    assert verify.status_code == 200
    assert (verify.json()["ok"], verify.json()["head_event_id"]) == (False, None)
    assert "no head row" in verify.json()["reason"]
    assert (await app_client.get("/v1/audit", headers=alice)).json()["items"] == []


async def test_verify_against_a_supplied_checkpoint(
    app_client: httpx.AsyncClient,
    alice: dict[str, str],
    sessionmaker: Sessions,
    tamper: Tamper,
    settings: Settings,
) -> None:
    await append(sessionmaker, 3)
    signer = AuditCheckpointer(sessionmaker, CheckpointKey(PRIVATE_KEY), settings.audit)
    checkpoint = await signer.run_once()
    assert checkpoint is not None
    keys = (await app_client.get("/v1/audit/keys", headers=alice)).json()["keys"]
    assert [(key["kid"], key["alg"], key["crv"]) for key in keys] == [
        (checkpoint.key_id, "Ed25519", "Ed25519")
    ]
    assert "d" not in keys[0]

    posted = (
        await app_client.post("/v1/audit/verify", json={"checkpoint": checkpoint.jws}, headers=alice)
    ).json()
    assert (posted["ok"], posted["checkpoints_enabled"], posted["checkpoints_checked"]) == (True, True, 2)
    assert (posted["checkpoint"]["event_id"], posted["checkpoint"]["source"]) == (3, "supplied")
    query = await app_client.get(f"/v1/audit/verify?checkpoint={checkpoint.jws}", headers=alice)
    assert query.json()["checkpoint"]["source"] == "supplied"

    forged = checkpoint.jws[:-2] + ("AA" if not checkpoint.jws.endswith("AA") else "BA")
    refused = (await app_client.post("/v1/audit/verify", json={"checkpoint": forged}, headers=alice)).json()
    assert refused["ok"] is False
    assert "signature" in refused["reason"]
    problem(await app_client.post("/v1/audit/verify", json={"checkpoint": "x.y"}, headers=alice), 422)
    problem(await app_client.get("/v1/audit/verify?checkpoint=nonsense", headers=alice), 422)
    problem(await app_client.post("/v1/audit/verify", json={"checkpoint": 7}, headers=alice), 422)

    await tamper("DELETE FROM audit_event WHERE id = 3")
    await tamper(f"UPDATE audit_head SET last_event_id = 2, last_hash = '{await hash_of(sessionmaker, 2)}'")
    await tamper("DELETE FROM audit_checkpoint")
    assert (await app_client.get("/v1/audit/verify", headers=alice)).json()["ok"] is True
    broken = (
        await app_client.post("/v1/audit/verify", json={"checkpoint": checkpoint.jws}, headers=alice)
    ).json()
    assert (broken["ok"], broken["first_broken_id"]) == (False, 3)


async def test_without_a_signing_key_checkpoints_are_off(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"audit": AuditSettings()}), run_executor=False)
    secret = settings.auth.dev_clients["alice"].get_secret_value()
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            grant = {"grant_type": "client_credentials"}
            issued = await client.post("/oauth/token", data=grant, auth=("alice", secret))
            alice = {"Authorization": f"Bearer {issued.json()['access_token']}"}
            verify = (await client.get("/v1/audit/verify", headers=alice)).json()
            assert (verify["ok"], verify["checkpoints_enabled"], verify["checkpoint"]) == (True, False, None)
            assert (await client.get("/v1/audit/keys", headers=alice)).json() == {"keys": []}
            token = (
                CheckpointKey(PRIVATE_KEY)
                .sign(1, "0" * 64, __import__("datetime").datetime.now().astimezone())
                .jws
            )
            problem(await client.post("/v1/audit/verify", json={"checkpoint": token}, headers=alice), 409)


@pytest.mark.parametrize("path", ["/v1/audit", "/v1/audit/export"])
async def test_since_and_until_take_rfc3339_date_times_only(
    app_client: httpx.AsyncClient, alice: dict[str, str], sessionmaker: Sessions, path: str
) -> None:
    await append(sessionmaker, 1)
    for value in ("1700000000", "1700000000.5", "2026-01-01", "2026-01-01T00:00:00", "yesterday", "1e10"):
        for name in ("since", "until"):
            body = problem(await app_client.get(f"{path}?{name}={quote(value)}", headers=alice), 422)
            assert body["errors"][0]["parameter"] == name
    for value, count in (("2000-01-01T00:00:00Z", 1), ("2999-01-01T00:00:00+01:00", 0)):
        response = await app_client.get(f"{path}?since={quote(value)}", headers=alice)
        assert response.status_code == 200, response.text
        assert len(response.json()["items"] if path == "/v1/audit" else response.text.splitlines()) == count
    until = await app_client.get(f"{path}?until={quote('2000-01-01T00:00:00.5-05:00')}", headers=alice)
    assert until.status_code == 200
    assert (until.json()["items"] if path == "/v1/audit" else until.text.splitlines()) == []


async def test_the_new_audit_routes_need_describe_on_cluster(
    app_client: httpx.AsyncClient, token: Callable[[str], Awaitable[str]]
) -> None:
    bob = {"Authorization": f"Bearer {await token('bob')}"}
    problem(await app_client.get("/v1/audit/keys", headers=bob), 403)
    problem(await app_client.get("/v1/audit/verify?checkpoint=x", headers=bob), 403)
    problem(await app_client.post("/v1/audit/verify", json={"checkpoint": "x"}, headers=bob), 403)
