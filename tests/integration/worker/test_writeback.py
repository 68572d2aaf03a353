"""The write-back of one sent group (``WriteBack``) on SQLite and PostgreSQL: answers are written as they
arrive, side by side, and the write that completes a deletion counts on every earlier one."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from worker_helpers import Target, assert_chain_ok, audit_events, deletion_status, insert_deletion

from app.adapters.db.repositories import claims as repo
from app.adapters.db.repositories.claims import Claim, PartitionUpdate
from app.adapters.db.session import write_transaction
from app.domain.deletions import PartitionStatus
from app.worker.writeback import WriteBack

Maker = async_sessionmaker[AsyncSession]


async def _claims(sessionmaker: Maker, now: datetime) -> list[Claim]:
    async with write_transaction(sessionmaker) as session:
        return await repo.claim_due(session, owner="w1", now=now, lease_seconds=30, limit=100)


def _succeeded(claim: Claim, now: datetime) -> PartitionUpdate:
    offset = claim.resolved_offset
    return PartitionUpdate(claim.id, claim.fence, PartitionStatus.SUCCEEDED, offset, offset, None, None, now)


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
