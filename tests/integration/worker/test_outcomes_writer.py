"""The write-back of one sent group (``WriteBack``) on SQLite and PostgreSQL: answers are written as they
arrive, side by side, and the write that completes a deletion counts on every earlier one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import pytest
from helpers.worker import Target, assert_chain_ok, audit_events, deletion_status, insert_deletion
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker

from app.adapters.db.repositories import claims as repo
from app.adapters.db.repositories.claims import Claim, PartitionUpdate
from app.adapters.db.session import write_transaction
from app.domain.deletions import PartitionStatus
from app.worker.outcomes.summary import SUMMARY_AHEAD_PARTITIONS
from app.worker.outcomes.writer import WriteBack

Maker = async_sessionmaker[AsyncSession]


async def _claims(sessionmaker: Maker, now: datetime) -> list[Claim]:
    async with write_transaction(sessionmaker) as session:
        return await repo.claim_due(session, owner="w1", now=now, lease_seconds=30, limit=100)


def _succeeded(claim: Claim, now: datetime) -> PartitionUpdate:
    offset = claim.resolved_offset
    return PartitionUpdate(claim.id, claim.fence, PartitionStatus.SUCCEEDED, offset, offset, None, None, now)


def _failed(claim: Claim, now: datetime) -> PartitionUpdate:
    code = "POLICY_VIOLATION"
    return PartitionUpdate(claim.id, claim.fence, PartitionStatus.FAILED, 0, 0, code, "compact", now)


async def test_answers_written_side_by_side_complete_the_deletion_once(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    claims = await _claims(sessionmaker, now)
    writer = WriteBack(sessionmaker, "w1", {claim.id: claim for claim in claims})
    # Every answer arrives before any write ended: the first ones are written at once, side by side;
    # the last one completes the deletion, so it must count on all of them.
    for claim in claims:
        writer.add([_succeeded(claim, now)], now)
    result = await writer.finish()
    assert writer.leased() == []

    assert result.completed == [deletion_id]
    assert result.applied == {PartitionStatus.SUCCEEDED: len(targets)}
    assert await deletion_status(sessionmaker, deletion_id) == "succeeded"
    [completed] = await audit_events(sessionmaker, "deletion.completed")
    outcomes = completed["details"]["partitions"]
    assert list(zip(outcomes["partition"], outcomes["status"], strict=True)) == [
        (t.partition, "succeeded") for t in targets
    ]
    await assert_chain_ok(sessionmaker)


async def test_a_large_deletion_answered_by_leaders_is_summarized_as_read_back(
    sessionmaker: Maker,
) -> None:
    """Its summary is made partly ahead, while the leaders answer (``outcomes.summary``): the same content,
    order and canonical text as reading every row back."""
    topics = ["b-x", "B", "a_b", "a-b", "Z"]
    targets = [Target(t, p, 10 + p) for p in range(SUMMARY_AHEAD_PARTITIONS // len(topics)) for t in topics]
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    async with write_transaction(sessionmaker) as session:
        claims = await repo.claim_due(session, owner="w1", now=now, lease_seconds=30, limit=len(targets))
    writer = WriteBack(sessionmaker, "w1", {claim.id: claim for claim in claims})
    for leader in range(3):  # each leader's partitions answer together, the last one completes it
        answer = [c for c in claims if c.partition % 3 == leader]
        writer.add([_failed(c, now) if c.topic == "Z" else _succeeded(c, now) for c in answer], now)
        await asyncio.sleep(0)
    result = await writer.finish()
    assert result.completed == [deletion_id]
    [completed] = await audit_events(sessionmaker, "deletion.completed")
    async with write_transaction(sessionmaker) as session:
        [read_back] = (await repo.partition_outcomes(session, [deletion_id])).values()
    assert completed["details"]["partitions"] == read_back
    assert completed["details"]["counts"] == {"failed": len(targets) // 5, "succeeded": len(targets) * 4 // 5}
    await assert_chain_ok(sessionmaker)


async def test_rows_keep_their_lease_until_their_write_starts(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    claims = await _claims(sessionmaker, now)
    writer = WriteBack(sessionmaker, "w1", {claim.id: claim for claim in claims})
    first, *middle, last = claims
    writer.add([_succeeded(first, now)], now)
    assert writer.leased() == [*middle, last]  # the first one is being written, the rest not answered
    await writer.finish()
    # The last answer rolls the deletion up: queued until the writes under way ended, leased meanwhile.
    writer.add([_succeeded(claim, now) for claim in middle], now)
    writer.add([_succeeded(last, now)], now)
    assert writer.leased() == [last]
    result = await writer.finish()
    assert writer.leased() == []
    assert result.completed == [first.deletion_id]


@asynccontextmanager
async def _row_held(sessionmaker: Maker, claim: Claim) -> AsyncIterator[AsyncConnection]:
    """A PostgreSQL transaction holding ``claim``'s row lock (so its write waits), rolled back at the end
    unless the caller commits."""
    if sessionmaker.kw["bind"].dialect.name != "postgresql":
        pytest.skip("PostgreSQL only: writes of one group run side by side there")
    async with sessionmaker.kw["bind"].connect() as connection:
        transaction = await connection.begin()
        lock = "SELECT id FROM partition_deletion WHERE id = :id FOR UPDATE"
        await connection.execute(text(lock), {"id": claim.id})
        try:
            yield connection
        finally:
            if transaction.is_active:
                await transaction.rollback()


async def _until_locked(sessionmaker: Maker, claim: Claim) -> None:
    """Wait until another transaction holds ``claim``'s row (written, not yet committed)."""
    query = text("SELECT id FROM partition_deletion WHERE id = :id FOR UPDATE NOWAIT")
    for _ in range(500):
        async with sessionmaker.kw["bind"].connect() as connection:
            try:
                await connection.execute(query, {"id": claim.id})
            except DBAPIError as exc:
                if "could not obtain lock" not in str(exc):  # LockNotAvailable: the row is held
                    raise
                return
            finally:
                await connection.rollback()
        await asyncio.sleep(0.01)
    raise AssertionError(f"row {claim.id} was never locked")


@asynccontextmanager
async def _completing_beside_a_waiting_write(
    sessionmaker: Maker, targets: list[Target]
) -> AsyncIterator[tuple[str, Claim, WriteBack, AsyncConnection]]:
    """A deletion whose first row's write waits on a row lock held by the yielded connection, while the
    write of the other rows, which completes the deletion, has already written them."""
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    first, *rest = await _claims(sessionmaker, now)
    writer = WriteBack(sessionmaker, "w1", {claim.id: claim for claim in (first, *rest)})
    async with _row_held(sessionmaker, first) as other:
        writer.add([_succeeded(first, now)], now)  # a side write, waiting for the row
        writer.add([_succeeded(claim, now) for claim in rest], now)  # completes the deletion
        await _until_locked(sessionmaker, rest[-1])  # its own rows are written meanwhile
        yield deletion_id, first, writer, other


async def test_the_completing_write_runs_beside_the_writes_under_way(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    async with _completing_beside_a_waiting_write(sessionmaker, targets) as (deletion_id, _, writer, _):
        # It rolls up only once the side write ended (the deletion is as it was stored).
        assert await deletion_status(sessionmaker, deletion_id) == "pending"
    result = await writer.finish()

    assert result.completed == [deletion_id]
    assert result.applied == {PartitionStatus.SUCCEEDED: len(targets)}
    assert await deletion_status(sessionmaker, deletion_id) == "succeeded"
    [completed] = await audit_events(sessionmaker, "deletion.completed")
    assert completed["details"]["partitions"]["status"] == ["succeeded"] * len(targets)
    await assert_chain_ok(sessionmaker)


async def test_a_row_the_write_under_way_loses_keeps_the_deletion_open(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    async with _completing_beside_a_waiting_write(sessionmaker, targets) as (
        deletion_id,
        first,
        writer,
        other,
    ):
        # Another worker claims the first row meanwhile (its fence moves on): the side write writes nothing.
        bump = "UPDATE partition_deletion SET fence = fence + 1 WHERE id = :id"
        await other.execute(text(bump), {"id": first.id})
        await other.commit()
    result = await writer.finish()

    # The completion summary was rendered as if the first row were written: it must not be used.
    assert result.stale == 1
    assert result.completed == []
    assert result.applied == {PartitionStatus.SUCCEEDED: len(targets) - 1}
    assert await deletion_status(sessionmaker, deletion_id) not in {"succeeded", "failed", "partially_failed"}
    assert await audit_events(sessionmaker, "deletion.completed") == []
    await assert_chain_ok(sessionmaker)
