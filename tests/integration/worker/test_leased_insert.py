"""A new deletion stored with its first batch claimed by the accepting instance's executor, in the
transaction that stores it (``app.services.deletions.group_commit`` ``LeasedInsert``), on SQLite and
PostgreSQL: its first batch is stored already claimed and sent without a claim round; several stored in
one insert share one lease, and the claimed rows of all come back from the insert; other instances keep
off them while the lease runs and take them over after a crash; a rollback stores nothing and frees the
batch slot; without a running executor the rows stay pending."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from helpers.deletion_rows import new_deletion as unsaved_deletion
from helpers.worker import (
    assert_chain_ok,
    audit_events,
    drive,
    log_start_offsets,
    partitions_of,
    produce,
    wait_status,
)
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import Deletion, PartitionDeletion
from app.adapters.db.repositories import deletions as deletions_repo
from app.adapters.db.repositories.deletions import PlannedPartition
from app.adapters.db.session import write_transaction
from app.adapters.kafka import KafkaClusters
from app.domain.ports import Lease, TopicPartition
from app.services.deletions.group_commit import leased_insert
from app.settings import Settings
from app.worker import Executor
from app.worker.executor import MAX_BATCHES

Maker = async_sessionmaker[AsyncSession]
CUTS = {0: 3, 1: 4, 2: 5, 3: 6}


@pytest.fixture
async def orders(emulator: Any) -> str:
    emulator.create_topic("orders", partitions=4, replication_factor=3)
    await produce(emulator, "orders", dict.fromkeys(range(4), 10))
    return "orders"


@pytest.fixture
def idle_settings(settings: Settings) -> Settings:
    """An executor that, once idle, only looks for work when woken (or after an hour); claims 3 rows."""
    worker = settings.worker.model_copy(update={"poll_interval_seconds": 3600.0, "claim_batch": 3})
    return settings.model_copy(update={"worker": worker})


def new_deletion(timeout_ms: int = 10_000) -> tuple[Deletion, list[PlannedPartition]]:
    planned = [PlannedPartition(TopicPartition("orders", p), o, o) for p, o in CUTS.items()]
    return unsaved_deletion(planned, timeout_ms=timeout_ms), planned


async def store(
    sessionmaker: Maker,
    executor: Executor | None,
    deletion: Deletion,
    planned: list[PlannedPartition],
    *,
    fail: bool = False,
) -> None:
    """The accepting transaction, storing under the executor's lease; ``fail`` raises before the commit."""
    async with leased_insert(executor) as insert, write_transaction(sessionmaker) as session:
        await insert.create_deletions(session, [(deletion, planned)])
        if fail:
            raise RuntimeError("audit failed")


async def stored_rows(session: AsyncSession, deletion_id: str) -> list[Any]:
    query = (
        select(PartitionDeletion)
        .where(PartitionDeletion.deletion_id == deletion_id)
        .order_by(PartitionDeletion.partition)
    )
    return list((await session.execute(query)).scalars())


def states(rows: Sequence[Any]) -> list[tuple[str, int, int, str | None]]:
    return [(r.status, r.fence, r.attempts, r.lease_owner) for r in rows]


async def test_first_batch_is_stored_claimed_and_sent_without_a_claim_round(
    emulator: Any, sessionmaker: Maker, gateway: KafkaClusters, idle_settings: Settings, orders: str
) -> None:
    executor = Executor(sessionmaker, gateway, idle_settings, instance_id="accepting")
    await executor.start()
    try:
        deletion, planned = new_deletion()
        async with leased_insert(executor) as insert, write_transaction(sessionmaker) as session:
            await insert.create_deletions(session, [(deletion, planned)])
            stored = await stored_rows(session, deletion.id)
        # As committed: the first claim_batch rows claimed by this instance's executor, the rest pending.
        assert states(stored) == [("in_progress", 1, 1, "accepting")] * 3 + [("pending", 0, 0, None)]
        # The fourth row is beyond claim_batch: pending, for the woken executor (or any instance).
        assert await wait_status(sessionmaker, deletion.id) == "succeeded"
    finally:
        await executor.stop()
    rows = await partitions_of(sessionmaker, deletion.id)
    assert states(rows) == [("succeeded", 1, 1, "accepting")] * 4
    deadline = deletion.created_at + timedelta(milliseconds=10_000)
    assert [r.deadline_at for r in rows[:3]] == [deadline] * 3
    for partition, cut in CUTS.items():
        assert set(log_start_offsets(emulator, orders, partition).values()) == {cut}
    [summary] = await audit_events(sessionmaker, "deletion.completed")
    assert summary["details"]["partitions"]["fence"] == [1, 1, 1, 1]
    await assert_chain_ok(sessionmaker)


async def test_rows_stored_claimed_are_held_by_the_lease_then_taken_over_after_a_crash(
    emulator: Any, sessionmaker: Maker, gateway: KafkaClusters, settings: Settings, orders: str
) -> None:
    deletion, planned = new_deletion()
    # What a crash right after the commit leaves behind: rows claimed by an executor that never sends.
    lease = Lease("crashed", datetime.now(UTC) + timedelta(seconds=3), limit=3)
    async with write_transaction(sessionmaker) as session:
        claims = await deletions_repo.create_deletions(session, [(deletion, planned)], lease=lease)
        assert await deletions_repo.leased_claims(session, [deletion], lease) == claims
    assert [(c.partition, c.resolved_offset, c.fence, c.attempts) for c in claims] == [
        (p, CUTS[p], 1, 1) for p in range(3)
    ]
    rows = await partitions_of(sessionmaker, deletion.id)
    assert [r.id for r in rows[:3]] == [c.id for c in claims]
    assert states(rows) == [("in_progress", 1, 1, "crashed")] * 3 + [("pending", 0, 0, None)]
    other = Executor(sessionmaker, gateway, settings, instance_id="other")
    # While the lease runs, another instance claims (and sends) only the row nobody holds.
    assert await other.run_once() == 1
    assert await drive(other, sessionmaker, deletion.id) == "succeeded"
    rows = await partitions_of(sessionmaker, deletion.id)
    # Taken over once the lease ran out: claimed again with a new fence, sent with the stored offsets.
    assert states(rows) == [("succeeded", 2, 2, "other")] * 3 + [("succeeded", 1, 1, "other")]
    for partition, cut in CUTS.items():
        assert set(log_start_offsets(emulator, orders, partition).values()) == {cut}


async def test_claims_of_several_deletions_stored_in_one_insert_come_back_in_id_order(
    sessionmaker: Maker,
) -> None:
    # A group commit: three deletions of four partitions, one lease of six rows for all of them.
    new = [new_deletion(timeout_ms) for timeout_ms in (10_000, 20_000, 30_000)]
    first, second, third = (deletion for deletion, _ in new)
    lease = Lease("accepting", datetime.now(UTC) + timedelta(seconds=30), limit=6)
    async with write_transaction(sessionmaker) as session:
        claims = await deletions_repo.create_deletions(session, new, lease=lease)
        assert await deletions_repo.leased_claims(session, [first, second, third], lease) == claims
    assert [(c.deletion_id, c.partition) for c in claims] == [(first.id, p) for p in range(4)] + [
        (second.id, p) for p in range(2)
    ]
    assert [c.id for c in claims] == sorted(c.id for c in claims)
    assert {(c.deletion_id, c.deadline_at, c.timeout_ms) for c in claims} == {
        (d.id, lease.first_claim(d)[3], d.timeout_ms) for d in (first, second)
    }
    second_rows = await partitions_of(sessionmaker, second.id)
    assert states(second_rows) == [("in_progress", 1, 1, "accepting")] * 2 + [("pending", 0, 0, None)] * 2
    assert states(await partitions_of(sessionmaker, third.id)) == [("pending", 0, 0, None)] * 4


async def test_a_rollback_stores_nothing_and_frees_the_batch_slot(
    sessionmaker: Maker, gateway: KafkaClusters, settings: Settings
) -> None:
    executor = Executor(sessionmaker, gateway, settings, instance_id="accepting")
    await executor.start()
    try:
        deletion, planned = new_deletion()
        with pytest.raises(RuntimeError, match="audit failed"):
            await store(sessionmaker, executor, deletion, planned, fail=True)
        assert await partitions_of(sessionmaker, deletion.id) == []
        # Every slot but the one kept for claiming is free again.
        leases = [executor.reserve() for _ in range(MAX_BATCHES)]
        assert [lease is not None for lease in leases] == [True] * (MAX_BATCHES - 1) + [False]
        for lease in leases:
            if lease is not None:
                executor.release(lease)
    finally:
        await executor.stop()


@pytest.mark.parametrize("instance", ["api_only", "executor_stopped"])
async def test_without_a_running_executor_rows_are_stored_pending(
    sessionmaker: Maker, gateway: KafkaClusters, settings: Settings, instance: str
) -> None:
    # serve --api-only has no executor; one that is not running (or has no slot free) takes nothing.
    executor = Executor(sessionmaker, gateway, settings) if instance == "executor_stopped" else None
    deletion, planned = new_deletion()
    await store(sessionmaker, executor, deletion, planned)
    rows = await partitions_of(sessionmaker, deletion.id)
    assert states(rows) == [("pending", 0, 0, None)] * 4
    assert {(r.lease_expires_at, r.deadline_at) for r in rows} == {(None, None)}
