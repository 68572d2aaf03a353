"""Idempotency-Key: replays answer with the original deletion, mismatches are 422, and concurrent
duplicates create exactly one deletion (on SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from helpers.api import assert_problem, deletion_body


@pytest.fixture
def run_executor() -> bool:
    return False


async def _count(client: httpx.AsyncClient, headers: dict[str, str], action: str) -> tuple[int, int]:
    deletions = (await client.get("/v1/deletions", headers=headers)).json()["items"]
    events = (await client.get(f"/v1/audit?action={action}", headers=headers)).json()["items"]
    return len(deletions), len(events)


async def test_same_key_same_body_replays(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str
) -> None:
    headers = {**alice, "Idempotency-Key": "key-1"}
    first = await app_client.post("/v1/deletions", json=deletion_body((orders, 0, -1)), headers=headers)
    # Same request, keys in another order: still the same request.
    body = dict(reversed(list(deletion_body((orders, 0, -1)).items())))
    second = await app_client.post("/v1/deletions", json=body, headers=headers)
    assert (first.status_code, second.status_code) == (202, 202)
    assert first.json()["id"] == second.json()["id"]
    assert first.headers["location"] == second.headers["location"]
    assert "idempotent-replayed" not in first.headers
    assert second.headers["idempotent-replayed"] == "true"
    assert await _count(app_client, alice, "deletion.requested") == (1, 1)


async def test_same_key_different_body_is_422(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str
) -> None:
    headers = {**alice, "Idempotency-Key": "key-2"}
    first = await app_client.post("/v1/deletions", json=deletion_body((orders, 0, 3)), headers=headers)
    assert first.status_code == 202
    second = await app_client.post("/v1/deletions", json=deletion_body((orders, 0, 4)), headers=headers)
    problem = assert_problem(second, 422)
    assert problem["type"].endswith("idempotency-key-reused")
    assert await _count(app_client, alice, "deletion.requested") == (1, 1)


async def test_keys_are_scoped_to_the_principal(
    app_client: httpx.AsyncClient, alice: dict[str, str], bob: dict[str, str], orders: str
) -> None:
    body = deletion_body((orders, 1, 2))
    a = await app_client.post("/v1/deletions", json=body, headers={**alice, "Idempotency-Key": "shared"})
    b = await app_client.post("/v1/deletions", json=body, headers={**bob, "Idempotency-Key": "shared"})
    assert (a.status_code, b.status_code) == (202, 202)
    assert a.json()["id"] != b.json()["id"]
    assert b.json()["principal"] == "User:bob"


async def test_twenty_concurrent_duplicates_make_one_deletion(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str
) -> None:
    headers = {**alice, "Idempotency-Key": "burst"}
    body = deletion_body((orders, 0, -1), (orders, 1, 7), (orders, 2, -1))
    responses = await asyncio.gather(
        *(app_client.post("/v1/deletions", json=body, headers=headers) for _ in range(20))
    )
    assert {r.status_code for r in responses} == {202}
    assert len({r.json()["id"] for r in responses}) == 1
    assert sum(r.headers.get("idempotent-replayed") != "true" for r in responses) == 1
    assert await _count(app_client, alice, "deletion.requested") == (1, 1)
    verify = await app_client.get("/v1/audit/verify", headers=alice)
    assert verify.json()["ok"] is True
