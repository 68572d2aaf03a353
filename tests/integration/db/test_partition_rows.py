"""Partition rows as the accept path inserts them and the executor's write-back updates them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from helpers.deletion_rows import new_deletion, offsets
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.migrate import upgrade
from app.adapters.db.models import PartitionDeletion
from app.adapters.db.repositories import deletions as repo
from app.adapters.db.repositories.write_back import (
    POSTGRESQL_UPDATE,
    PartitionUpdate,
    postgresql_update_params,
    write_updates,
)
from app.adapters.db.session import create_engine, make_sessionmaker, read_session, write_transaction
from app.domain.deletion_requests import PartitionStatus
from app.domain.ports import Lease, TopicPartition

# Group names are free text: these must reach the stored spec unchanged whatever array syntax carries them.
AWKWARD_GROUPS = ['quote"d', "back\\slash", "{brace},comma", "NULL", "", "späť ✓", "tab\tand\nnewline"]


def _planned() -> list[repo.PlannedPartition]:
    by_group: dict[str, object] = {"committed_by": AWKWARD_GROUPS}
    return [
        repo.PlannedPartition(TopicPartition("orders", 0), 7, 7, {"offset": 7}),
        repo.PlannedPartition(TopicPartition("orders", 1), -1, 12, {"offset": -1}),
        repo.PlannedPartition(TopicPartition("orders.eu", 0), 3, 3, by_group),
        repo.PlannedPartition(TopicPartition("orders.eu", 1), 4, 4, None),
    ]


async def _rows(sessionmaker: async_sessionmaker[AsyncSession], deletion_id: str) -> list[PartitionDeletion]:
    async with read_session(sessionmaker) as session:
        query = select(PartitionDeletion).where(PartitionDeletion.deletion_id == deletion_id)
        return list((await session.execute(query.order_by(PartitionDeletion.id))).scalars())


async def test_insert_keeps_every_value_and_claims_the_first_rows(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    planned = _planned()
    deletion = new_deletion(planned)
    lease = Lease("worker-1", deletion.created_at + timedelta(seconds=30), limit=3)
    async with write_transaction(sessionmaker) as session:
        claims = await repo.create_deletions(session, [(deletion, planned)], lease=lease)

    rows = await _rows(sessionmaker, deletion.id)
    assert [(r.topic, r.partition, r.requested_offset, r.resolved_offset, r.spec) for r in rows] == [
        (p.partition.topic, p.partition.partition, p.requested_offset, p.resolved_offset, p.spec)
        for p in planned
    ]
    assert [(r.status, r.lease_owner, r.fence) for r in rows] == [("in_progress", "worker-1", 1)] * 3 + [
        ("pending", None, 0)
    ]
    assert [(c.id, c.topic, c.partition, c.resolved_offset) for c in claims] == [
        (r.id, r.topic, r.partition, r.resolved_offset) for r in rows[:3]
    ]


async def test_write_back_updates_rows_in_place(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    """The write-back changes no indexed column, so PostgreSQL updates every row on its own page (HOT)
    instead of adding a new entry to each index: an index on status or next_attempt_at breaks this."""
    planned = offsets("orders", 200, 5)
    deletion = new_deletion(planned)
    lease = Lease("worker-1", deletion.created_at + timedelta(seconds=30), limit=200)
    async with write_transaction(sessionmaker) as session:
        claims = await repo.create_deletions(session, [(deletion, planned)], lease=lease)
    now = datetime.now(UTC)
    updates = [
        PartitionUpdate(c.id, c.fence, PartitionStatus.SUCCEEDED, 5, 5, None, None, now) for c in claims
    ]
    async with write_transaction(sessionmaker) as session:
        written = await write_updates(session, updates, deletions=[deletion.id], owner="worker-1", now=now)
        if session.get_bind().dialect.name == "postgresql":
            counts = await session.execute(
                text(
                    "SELECT pg_stat_get_xact_tuples_updated(oid), pg_stat_get_xact_tuples_hot_updated(oid) "
                    "FROM pg_class WHERE relname = 'partition_deletion'"
                )
            )
            assert tuple(counts.one()) == (200, 200)
    assert written == {c.id for c in claims}
    assert {r.status for r in await _rows(sessionmaker, deletion.id)} == {"succeeded"}


async def test_write_back_reads_only_its_deletions_rows(postgresql_url: str) -> None:
    """With 300,000 older rows beside a 5,000-row batch, the write-back must find its rows through the
    deletion's index: matched on ids alone, PostgreSQL scans the whole table (growing with history)."""
    await upgrade(postgresql_url)
    engine = create_engine(postgresql_url)
    try:
        sessionmaker = make_sessionmaker(engine)
        planned = offsets("orders", 5_000, 5)
        deletion = new_deletion(planned)
        lease = Lease("worker-1", deletion.created_at + timedelta(seconds=30), limit=5_000)
        async with write_transaction(sessionmaker) as session:
            claims = await repo.create_deletions(session, [(deletion, planned)], lease=lease)
            await session.execute(text(HISTORY))
            await session.execute(text("ANALYZE partition_deletion"))
        now = datetime.now(UTC)
        updates = [
            PartitionUpdate(c.id, c.fence, PartitionStatus.SUCCEEDED, 5, 5, None, None, now) for c in claims
        ]
        params = postgresql_update_params(updates, deletions=[deletion.id], owner="worker-1", now=now)
        async with read_session(sessionmaker) as session:
            plan = (await session.execute(text("EXPLAIN " + POSTGRESQL_UPDATE.text), params)).scalars().all()
        assert not [line for line in plan if "Seq Scan on partition_deletion" in line], plan
    finally:
        await engine.dispose()


# 60 finished deletions of 5,000 partitions each, written by other workers.
HISTORY = """
    INSERT INTO partition_deletion (deletion_id, topic, partition, requested_offset, resolved_offset,
        status, attempts, fence, lease_owner, next_attempt_at, updated_at)
    SELECT 'old-' || (g / 5000), 'orders', g % 5000, 5, 5, 'succeeded', 1, 1, 'worker-' || (g % 3),
        now(), now()
    FROM generate_series(0, 299999) AS g
"""
