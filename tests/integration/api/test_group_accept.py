"""Group commit of accepted deletions (``app.services.deletions.group_commit``), on SQLite and PostgreSQL:
concurrent POSTs are stored several per transaction and worked by the executor several per batch, each
still one deletion with its own ``deletion.requested`` and ``deletion.completed`` events in a chain that
verifies; an Idempotency-Key conflict, or a request whose storing fails, does not fail the requests
stored with it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import httpx
import pytest
from helpers.api import assert_problem, deletion_body, wait_until
from helpers.deletion_rows import new_deletion
from helpers.kafka_records import produce
from prometheus_client import REGISTRY
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.approval_models import ApprovalRequest
from app.adapters.db.models import AuditEvent, Deletion
from app.adapters.db.repositories.deletions import PlannedPartition
from app.adapters.db.session import read_session
from app.audit import NewEvent, verify_chain
from app.audit.events import Actor
from app.domain.approvals import Requirement, RuleSnapshot
from app.domain.ports import TopicPartition
from app.services.deletions.group_commit import AcceptBatcher, Accepted, Hold, KeyTaken

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


async def chain_ok(sessionmaker: Maker) -> int:
    async with read_session(sessionmaker) as session:
        result = await verify_chain(session)
    assert result.ok, result
    return result.checked


async def count_events(sessionmaker: Maker, action: str) -> dict[str | None, int]:
    async with read_session(sessionmaker) as session:
        query = (
            select(AuditEvent.deletion_id, func.count())
            .where(AuditEvent.action == action)
            .group_by(AuditEvent.deletion_id)
        )
        rows = (await session.execute(query)).all()
    return {row[0]: row[1] for row in rows}


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


def accepted(topic: str, partition: int, deletion_id: str | None = None, key: str | None = None) -> Accepted:
    planned = [PlannedPartition(TopicPartition(topic, partition), 1, 1)]
    deletion = new_deletion(planned, timeout_ms=10_000, idempotency_key=key)
    if deletion_id is not None:
        deletion.id = deletion_id
    details = {"partition": partition}
    event = NewEvent("deletion.requested", "User:alice", None, None, "demo", deletion.id, details)
    return Accepted(deletion, planned, event)


async def store_together(batcher: AcceptBatcher, items: Sequence[Accepted]) -> list[Any]:
    """Store ``items`` queued at once (all are waiting before the batcher's task first runs)."""
    return list(await asyncio.gather(*(batcher.store(item) for item in items), return_exceptions=True))


async def test_one_transaction_stores_all_that_wait_and_checks_keys_within_it(sessionmaker: Maker) -> None:
    batcher = AcceptBatcher(sessionmaker, None, max_partitions=100)
    transactions = sample(TRANSACTIONS)
    items = [accepted("orders", 0, key="k"), accepted("orders", 1), accepted("orders", 0, key="k")]
    results = await store_together(batcher, items)
    assert sample(TRANSACTIONS) - transactions == 1
    assert [type(r) for r in results] == [type(None), type(None), KeyTaken]
    assert items[0].deletion.created_at == items[1].deletion.created_at
    stored = await count_events(sessionmaker, "deletion.requested")
    assert stored == dict.fromkeys([items[0].deletion.id, items[1].deletion.id], 1)
    # A key stored by an earlier transaction is taken too: nothing is stored for the request.
    later = accepted("orders", 2, key="k")
    assert [type(r) for r in await store_together(batcher, [later])] == [KeyTaken]
    assert later.deletion.id not in await count_events(sessionmaker, "deletion.requested")
    assert await chain_ok(sessionmaker) == 2
    await batcher.close()


async def test_a_protected_deletion_is_held_in_the_transaction_it_shares(sessionmaker: Maker) -> None:
    batcher = AcceptBatcher(sessionmaker, None, max_partitions=100)
    need = Requirement((RuleSnapshot("pii", ("Group:officers",), 1),), 1, 3600)
    held = replace(accepted("orders", 1), hold=Hold(need, {"partitions": []}, Actor("User:alice")))
    items = [accepted("orders", 0), held, accepted("orders", 2)]
    transactions = sample(TRANSACTIONS)
    assert await store_together(batcher, items) == [None] * 3
    assert sample(TRANSACTIONS) - transactions == 1
    async with read_session(sessionmaker) as session:
        statuses = {d.id: d.status for d in (await session.execute(select(Deletion))).scalars()}
        requests = [r.subject_id for r in (await session.execute(select(ApprovalRequest))).scalars()]
    assert [statuses[item.deletion.id] for item in items] == ["pending", "awaiting_approval", "pending"]
    assert requests == [held.deletion.id]
    ids = [item.deletion.id for item in items]
    assert await count_events(sessionmaker, "deletion.requested") == dict.fromkeys(ids, 1)
    assert await count_events(sessionmaker, "deletion.awaiting_approval") == {held.deletion.id: 1}
    assert await chain_ok(sessionmaker) == 4
    await batcher.close()


async def test_a_request_that_fails_to_store_does_not_fail_the_others(sessionmaker: Maker) -> None:
    batcher = AcceptBatcher(sessionmaker, None, max_partitions=100)
    first = accepted("orders", 0)
    assert await store_together(batcher, [first]) == [None]
    # The second reuses the first's id: the shared transaction fails, then each is stored alone.
    items = [accepted("orders", 1), accepted("orders", 2, first.deletion.id), accepted("orders", 3)]
    transactions = sample(TRANSACTIONS)
    results = await store_together(batcher, items)
    assert isinstance(results[1], IntegrityError)
    assert (results[0], results[2]) == (None, None)
    assert sample(TRANSACTIONS) - transactions == 2  # the two that committed, each alone
    stored = await count_events(sessionmaker, "deletion.requested")
    assert stored == dict.fromkeys([first.deletion.id, items[0].deletion.id, items[2].deletion.id], 1)
    assert await chain_ok(sessionmaker) == 3
    await batcher.close()


async def test_a_large_deletion_is_stored_apart(sessionmaker: Maker) -> None:
    batcher = AcceptBatcher(sessionmaker, None, max_partitions=2)
    big = accepted("orders", 0)
    big = replace(big, planned=[PlannedPartition(TopicPartition("orders", p), 1, 1) for p in range(3)])
    transactions = sample(TRANSACTIONS)
    results = await store_together(
        batcher, [accepted("orders", 0), big, accepted("orders", 1), accepted("orders", 2)]
    )
    assert results == [None] * 4
    # [the first: the large one would pass the cap], [the large one alone], [the last two together]
    assert sample(TRANSACTIONS) - transactions == 3
    assert await chain_ok(sessionmaker) == 4
    await batcher.close()
