"""The group commit of accepted deletions (``app.services.deletions.group_commit.AcceptBatcher``), on
SQLite and PostgreSQL: the requests waiting when a transaction starts are stored in it, Idempotency-Keys
checked within it and a protected deletion held in it; a request whose storing fails does not fail the
others, and a deletion past the partition cap is stored apart."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from helpers.audit import chain_ok, count_events
from helpers.deletion_rows import new_deletion
from prometheus_client import REGISTRY
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.approval_models import ApprovalRequest
from app.adapters.db.models import Deletion
from app.adapters.db.repositories.deletions import PlannedPartition
from app.adapters.db.session import read_session
from app.audit import NewEvent
from app.audit.events import Actor
from app.domain.approvals import Requirement, RuleSnapshot
from app.domain.ports import TopicPartition
from app.services.deletions.group_commit import AcceptBatcher, Accepted, Hold, KeyTaken

Maker = async_sessionmaker[AsyncSession]
TRANSACTIONS = "kafka_purge_accept_transactions_total"


def committed() -> float:
    """Transactions the batcher has committed in this process."""
    return REGISTRY.get_sample_value(TRANSACTIONS) or 0.0


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
    before = committed()
    items = [accepted("orders", 0, key="k"), accepted("orders", 1), accepted("orders", 0, key="k")]
    results = await store_together(batcher, items)
    assert committed() - before == 1
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
    before = committed()
    assert await store_together(batcher, items) == [None] * 3
    assert committed() - before == 1
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
    before = committed()
    results = await store_together(batcher, items)
    assert isinstance(results[1], IntegrityError)
    assert (results[0], results[2]) == (None, None)
    assert committed() - before == 2  # the two that committed, each alone
    stored = await count_events(sessionmaker, "deletion.requested")
    assert stored == dict.fromkeys([first.deletion.id, items[0].deletion.id, items[2].deletion.id], 1)
    assert await chain_ok(sessionmaker) == 3
    await batcher.close()


async def test_a_large_deletion_is_stored_apart(sessionmaker: Maker) -> None:
    batcher = AcceptBatcher(sessionmaker, None, max_partitions=2)
    big = accepted("orders", 0)
    big = replace(big, planned=[PlannedPartition(TopicPartition("orders", p), 1, 1) for p in range(3)])
    before = committed()
    results = await store_together(
        batcher, [accepted("orders", 0), big, accepted("orders", 1), accepted("orders", 2)]
    )
    assert results == [None] * 4
    # [the first: the large one would pass the cap], [the large one alone], [the last two together]
    assert committed() - before == 3
    assert await chain_ok(sessionmaker) == 4
    await batcher.close()
