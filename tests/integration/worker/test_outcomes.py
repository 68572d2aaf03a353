"""The write-back of one sent group (``app.worker.outcomes``) on SQLite and PostgreSQL: one transaction per
leader's answer, the roll-up read from what is stored, a deletion completed exactly once however its
answers' writes interleave."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from helpers.claims import answer, claim_due
from helpers.worker import (
    Target,
    assert_chain_ok,
    audit_events,
    deletion_status,
    insert_deletion,
    partitions_of,
)
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker

from app.adapters.db.repositories import write_back
from app.adapters.db.session import write_transaction
from app.domain.deletion_requests import PartitionStatus
from app.domain.ports import Claim
from app.worker import outcomes
from app.worker.outcomes import APPLY_ATTEMPTS, WriteBack

Maker = async_sessionmaker[AsyncSession]
LARGE = 1_000


def _writer(sessionmaker: Maker, claims: list[Claim], owner: str = "w1") -> WriteBack:
    return WriteBack(sessionmaker, owner, {claim.id: claim for claim in claims})


async def test_answers_written_one_by_one_complete_the_deletion_once(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    claims = await claim_due(sessionmaker, "w1", now)
    writer = _writer(sessionmaker, claims)
    *first, last = claims
    for claim in first:
        result = await writer.write([answer(claim, PartitionStatus.SUCCEEDED, now)], now)
        assert result is not None
        assert result.completed == []
        assert await deletion_status(sessionmaker, deletion_id) == "in_progress"
    result = await writer.write([answer(last, PartitionStatus.SUCCEEDED, now)], now)
    assert result is not None
    assert result.completed == [deletion_id]
    assert writer.leased() == []

    assert writer.result.completed == [deletion_id]
    assert writer.result.applied == {PartitionStatus.SUCCEEDED: len(targets)}
    assert await deletion_status(sessionmaker, deletion_id) == "succeeded"
    [completed] = await audit_events(sessionmaker, "deletion.completed")
    outcomes_ = completed["details"]["partitions"]
    assert list(zip(outcomes_["partition"], outcomes_["status"], strict=True)) == [
        (t.partition, "succeeded") for t in targets
    ]
    assert completed["details"]["counts"] == {"succeeded": len(targets)}
    await assert_chain_ok(sessionmaker)


async def test_a_large_deletion_answered_by_leaders_is_summarized_as_read_back(
    sessionmaker: Maker,
) -> None:
    """Its summary is every row as stored: the same content, order and counts as reading them back."""
    topics = ["b-x", "B", "a_b", "a-b", "Z"]
    targets = [Target(t, p, 10 + p) for p in range(LARGE // len(topics)) for t in topics]
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    claims = await claim_due(sessionmaker, "w1", now, limit=len(targets))
    writer = _writer(sessionmaker, claims)
    for leader in range(3):  # each leader's partitions answer together, the last one completes it
        answered = [c for c in claims if c.partition % 3 == leader]
        statuses = {
            c.id: PartitionStatus.FAILED if c.topic == "Z" else PartitionStatus.SUCCEEDED for c in answered
        }
        await writer.write([answer(c, statuses[c.id], now) for c in answered], now)
    assert writer.result.completed == [deletion_id]
    [completed] = await audit_events(sessionmaker, "deletion.completed")
    async with write_transaction(sessionmaker) as session:
        [read_back] = (await write_back.partition_outcomes(session, [deletion_id])).values()
    assert completed["details"]["partitions"] == read_back
    assert completed["details"]["counts"] == {"failed": len(targets) // 5, "succeeded": len(targets) * 4 // 5}
    assert len(await audit_events(sessionmaker, "deletion.partition_failed")) == len(targets) // 5
    await assert_chain_ok(sessionmaker)


async def test_rows_keep_their_lease_until_their_write_starts(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    claims = await claim_due(sessionmaker, "w1", now)
    writer = _writer(sessionmaker, claims)
    first, *rest = claims
    assert writer.leased() == claims
    await writer.write([answer(first, PartitionStatus.SUCCEEDED, now)], now)
    assert writer.leased() == rest
    await writer.write([answer(claim, PartitionStatus.SUCCEEDED, now) for claim in rest], now)
    assert writer.leased() == []
    assert writer.result.completed == [first.deletion_id]


async def test_a_failed_write_is_tried_again(
    sessionmaker: Maker, targets: list[Target], monkeypatch: pytest.MonkeyPatch
) -> None:
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    claims = await claim_due(sessionmaker, "w1", now)
    calls = 0
    apply = outcomes.apply_updates

    async def flaky(*args: Any, **kwargs: Any) -> outcomes.ApplyResult:
        nonlocal calls
        calls += 1
        if calls < APPLY_ATTEMPTS:
            raise DBAPIError("UPDATE partition_deletion", {}, ConnectionResetError("connection lost"))
        return await apply(*args, **kwargs)

    monkeypatch.setattr(outcomes, "apply_updates", flaky)
    result = await _writer(sessionmaker, claims).write(
        [answer(c, PartitionStatus.SUCCEEDED, now) for c in claims], now
    )
    assert calls == APPLY_ATTEMPTS
    assert result is not None
    assert result.completed == [deletion_id]
    assert await deletion_status(sessionmaker, deletion_id) == "succeeded"
    await assert_chain_ok(sessionmaker)


async def test_a_write_failing_every_attempt_leaves_its_rows_leased(
    sessionmaker: Maker, targets: list[Target], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is written and the group stops renewing the rows' lease: once it runs out, any instance
    claims the rows and sends them again."""
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    claims = await claim_due(sessionmaker, "w1", now)

    async def failing(*args: Any, **kwargs: Any) -> outcomes.ApplyResult:
        raise DBAPIError("UPDATE partition_deletion", {}, ConnectionResetError("connection lost"))

    monkeypatch.setattr(outcomes, "apply_updates", failing)
    writer = _writer(sessionmaker, claims)
    first, *rest = claims
    assert await writer.write([answer(first, PartitionStatus.SUCCEEDED, now)], now) is None
    assert writer.leased() == rest
    rows = await partitions_of(sessionmaker, deletion_id)
    assert {(r.status, r.lease_owner) for r in rows} == {("in_progress", "w1")}
    assert all(r.lease_expires_at is not None for r in rows)
    assert writer.result.applied == {}


@asynccontextmanager
async def _deletion_held(sessionmaker: Maker, deletion_id: str) -> AsyncIterator[AsyncConnection]:
    """A PostgreSQL transaction holding the deletion's row lock (so every write-back of its rows waits),
    rolled back at the end unless the caller commits."""
    if sessionmaker.kw["bind"].dialect.name != "postgresql":
        pytest.skip("PostgreSQL only: write-backs of one deletion run in concurrent transactions there")
    async with sessionmaker.kw["bind"].connect() as connection:
        transaction = await connection.begin()
        lock = "SELECT id FROM deletion WHERE id = :id FOR UPDATE"
        await connection.execute(text(lock), {"id": deletion_id})
        try:
            yield connection
        finally:
            if transaction.is_active:
                await transaction.rollback()


async def _waiting_on_locks(sessionmaker: Maker, count: int) -> None:
    """Wait until ``count`` other sessions wait for a row lock."""
    query = text(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE wait_event_type = 'Lock' AND datname = current_database()"
    )
    for _ in range(500):
        async with sessionmaker.kw["bind"].connect() as connection:
            if (await connection.execute(query)).scalar_one() >= count:
                return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{count} sessions never waited for a lock")


async def test_concurrent_answers_for_one_deletion_complete_it_once(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    """Two groups (two instances here) each write the answer for half of a deletion's rows, in
    concurrent transactions: the roll-up of the second sees the rows of the first, and exactly one of
    them records the completion."""
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    half = len(targets) // 2
    first = await claim_due(sessionmaker, "w1", now, limit=half)
    second = await claim_due(sessionmaker, "w2", now)
    writers = [(_writer(sessionmaker, first, "w1"), first), (_writer(sessionmaker, second, "w2"), second)]
    async with _deletion_held(sessionmaker, deletion_id) as other:
        writes = [
            asyncio.ensure_future(
                writer.write([answer(c, PartitionStatus.SUCCEEDED, now) for c in claims], now)
            )
            for writer, claims in writers
        ]
        await _waiting_on_locks(sessionmaker, 2)  # both are in flight, waiting for the deletion
        assert await deletion_status(sessionmaker, deletion_id) == "pending"
        await other.rollback()
        results = await asyncio.gather(*writes)
    assert sorted(len(r.completed) for r in results if r is not None) == [0, 1]
    assert await deletion_status(sessionmaker, deletion_id) == "succeeded"
    [completed] = await audit_events(sessionmaker, "deletion.completed")
    assert completed["details"]["counts"] == {"succeeded": len(targets)}
    assert sorted(completed["details"]["partitions"]["worker"]) == ["w1"] * half + ["w2"] * half
    await assert_chain_ok(sessionmaker)


async def test_answers_written_side_by_side_complete_the_deletion_once(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    """Every partition answered by its own leader, each answer written by a transaction of its own at
    the same time (on SQLite one after the other): one completion."""
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    claims = await claim_due(sessionmaker, "w1", now)
    writers = [_writer(sessionmaker, [claim]) for claim in claims]
    results = await asyncio.gather(
        *(
            writer.write([answer(claim, PartitionStatus.SUCCEEDED, now)], now)
            for writer, claim in zip(writers, claims, strict=True)
        )
    )
    assert [r.completed for r in results if r is not None and r.completed] == [[deletion_id]]
    assert await deletion_status(sessionmaker, deletion_id) == "succeeded"
    assert len(await audit_events(sessionmaker, "deletion.completed")) == 1
    await assert_chain_ok(sessionmaker)


async def test_a_row_lost_to_another_claim_keeps_the_deletion_open(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    first, *rest = await claim_due(sessionmaker, "w1", now)
    # Another worker claims the first row meanwhile (its fence moves on): its write writes nothing.
    async with write_transaction(sessionmaker) as session:
        bump = "UPDATE partition_deletion SET fence = fence + 1 WHERE id = :id"
        await session.execute(text(bump), {"id": first.id})
    writer = _writer(sessionmaker, [first, *rest])
    await writer.write([answer(claim, PartitionStatus.SUCCEEDED, now) for claim in (first, *rest)], now)

    assert writer.result.stale == 1
    assert writer.result.completed == []
    assert writer.result.applied == {PartitionStatus.SUCCEEDED: len(targets) - 1}
    assert await deletion_status(sessionmaker, deletion_id) not in {"succeeded", "failed", "partially_failed"}
    assert await audit_events(sessionmaker, "deletion.completed") == []
    [row] = [r for r in await partitions_of(sessionmaker, deletion_id) if r.id == first.id]
    assert (row.status, row.fence) == ("in_progress", first.fence + 1)
    await assert_chain_ok(sessionmaker)
