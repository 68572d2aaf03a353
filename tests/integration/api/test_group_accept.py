"""Concurrent ``POST /v1/deletions``, on SQLite and PostgreSQL: they are stored several per transaction
(group commit) and worked by the executor several per batch, each still one deletion with its own
``deletion.requested`` and ``deletion.completed`` events in a chain that verifies; an Idempotency-Key
conflict does not fail the requests stored with it (tests/integration/services/deletions/
test_group_commit.py tests the batcher itself)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import httpx
import pytest
from helpers.api import assert_problem, deletion_body, wait_until
from helpers.audit import chain_ok, count_events
from helpers.kafka_records import produce
from prometheus_client import REGISTRY
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

Maker = async_sessionmaker[AsyncSession]
PARTITIONS = 24
TRANSACTIONS = "kafka_purge_accept_transactions_total"
SENDS = "kafka_purge_delete_records_seconds_count"


@pytest.fixture
async def wide(emulator: Any) -> str:
    """Topic "wide" with 24 partitions of 5 records each: one request per partition."""
    emulator.create_topic("wide", partitions=PARTITIONS, replication_factor=3)
    await produce(emulator, "wide", dict.fromkeys(range(PARTITIONS), 5))
    return "wide"


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def post_all(
    client: httpx.AsyncClient, requests: Sequence[tuple[dict[str, Any], dict[str, str]]]
) -> list[httpx.Response]:
    return list(
        await asyncio.gather(
            *(client.post("/v1/deletions", json=body, headers=headers) for body, headers in requests)
        )
    )


async def test_concurrent_posts_share_transactions_and_executor_batches(
    app_client: httpx.AsyncClient, alice: dict[str, str], wide: str, sessionmaker: Maker
) -> None:
    transactions, sends = sample(TRANSACTIONS), sample(SENDS, {"cluster": "demo"})
    responses = await post_all(app_client, [(deletion_body((wide, p, 3)), alice) for p in range(PARTITIONS)])
    assert [r.status_code for r in responses] == [202] * PARTITIONS, [r.text for r in responses]
    ids = [r.json()["id"] for r in responses]
    assert len(set(ids)) == PARTITIONS

    async def all_succeeded() -> bool:
        bodies = [(await app_client.get(f"/v1/deletions/{i}", headers=alice)).json() for i in ids]
        return all(body["status"] == "succeeded" for body in bodies)

    await wait_until(all_succeeded)
    # Fewer commits than requests, and fewer DeleteRecords calls (each with its write-back) than deletions.
    assert sample(TRANSACTIONS) - transactions < PARTITIONS
    assert sample(SENDS, {"cluster": "demo"}) - sends < PARTITIONS
    assert await count_events(sessionmaker, "deletion.requested") == dict.fromkeys(ids, 1)
    assert await count_events(sessionmaker, "deletion.completed") == dict.fromkeys(ids, 1)
    assert await chain_ok(sessionmaker) == 2 * PARTITIONS
    for index, deletion_id in enumerate(ids):
        body = (await app_client.get(f"/v1/deletions/{deletion_id}", headers=alice)).json()
        assert [(p["partition"], p["status"]) for p in body["partitions"]] == [(index, "succeeded")]


async def test_an_idempotency_conflict_does_not_fail_its_neighbours(
    app_client: httpx.AsyncClient, alice: dict[str, str], wide: str, sessionmaker: Maker
) -> None:
    stored = await app_client.post(
        "/v1/deletions", json=deletion_body((wide, 0, 1)), headers={**alice, "Idempotency-Key": "old"}
    )
    assert stored.status_code == 202
    keyed = {**alice, "Idempotency-Key": "new"}
    requests = [
        (deletion_body((wide, 1, 2)), alice),
        (deletion_body((wide, 0, 2)), {**alice, "Idempotency-Key": "old"}),  # reused with another body
        (deletion_body((wide, 2, 2)), keyed),
        (deletion_body((wide, 3, 2)), alice),
        (deletion_body((wide, 2, 2)), keyed),  # a concurrent duplicate: one deletion for both
        (deletion_body((wide, 4, 2)), keyed),  # the same key with another body: 422
        (deletion_body((wide, 5, 2)), alice),
    ]
    responses = await post_all(app_client, requests)
    codes = [r.status_code for r in responses]
    assert [codes[i] for i in (0, 1, 3, 6)] == [202, 422, 202, 202]
    assert_problem(responses[1], 422)
    # Of the three requests with key "new", the first stored (any of the two equal ones) wins.
    new = [responses[i] for i in (2, 4, 5)]
    created = [r for r in new if r.status_code == 202 and "idempotent-replayed" not in r.headers]
    assert len(created) == 1
    winner = created[0].json()
    if winner["partitions"][0]["partition"] == 2:
        assert sorted(r.status_code for r in new) == [202, 202, 422]
        assert {r.json()["id"] for r in new if r.status_code == 202} == {winner["id"]}
    else:
        assert [r.status_code for r in new] == [422, 422, 202]
    ids = {r.json()["id"] for r in (stored, *responses) if r.status_code == 202}
    assert len(ids) == 5
    assert await count_events(sessionmaker, "deletion.requested") == dict.fromkeys(ids, 1)
    await chain_ok(sessionmaker)
