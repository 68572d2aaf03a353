"""The claim queue on SQLite and PostgreSQL: leases, fencing, due times, cancelled deletions, roll-up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from helpers.claims import answer, claim_due
from helpers.worker import (
    Target,
    assert_chain_ok,
    audit_events,
    deletion_status,
    insert_deletion,
    partitions_of,
)
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import Deletion, PartitionDeletion
from app.adapters.db.repositories import claims as repo
from app.adapters.db.repositories import write_back
from app.adapters.db.repositories.write_back import PartitionUpdate
from app.adapters.db.session import write_transaction
from app.domain.deletion_requests import PartitionStatus
from app.worker.outcomes import apply_updates

Maker = async_sessionmaker[AsyncSession]


async def test_claim_takes_the_lease_and_starts_the_deadline(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    deletion_id = await insert_deletion(sessionmaker, targets, timeout_ms=7_000)
    now = datetime.now(UTC)
    claims = await claim_due(sessionmaker, "w1", now)
    assert [(c.topic, c.partition) for c in claims] == [("orders", p) for p in range(4)]
    assert {(c.status, c.fence, c.attempts, c.cluster, c.timeout_ms) for c in claims} == {
        (PartitionStatus.IN_PROGRESS, 1, 1, "demo", 7_000)
    }
    rows = await partitions_of(sessionmaker, deletion_id)
    assert {r.lease_owner for r in rows} == {"w1"}
    assert all(r.deadline_at == now + timedelta(milliseconds=7_000) for r in rows)
    assert all(r.lease_expires_at == now + timedelta(seconds=30) for r in rows)
    # Live leases: nobody else gets the rows.
    assert await claim_due(sessionmaker, "w2", now + timedelta(seconds=29)) == []


async def test_expired_lease_is_claimed_again_with_a_new_fence(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    first = await claim_due(sessionmaker, "w1", now, lease=1)
    later = now + timedelta(seconds=2)
    second = await claim_due(sessionmaker, "w2", later, limit=2)
    assert [c.fence for c in second] == [2, 2]
    assert [c.attempts for c in second] == [2, 2]
    # The deadline still counts from the first claim.
    assert {c.deadline_at for c in second} == {first[0].deadline_at}
    rows = await partitions_of(sessionmaker, deletion_id)
    assert [r.lease_owner for r in rows] == ["w2", "w2", "w1", "w1"]


async def test_fence_refuses_a_stale_workers_write(sessionmaker: Maker, targets: list[Target]) -> None:
    deletion_id = await insert_deletion(sessionmaker, targets[:1])
    now = datetime.now(UTC)
    [stale] = await claim_due(sessionmaker, "w1", now, lease=1)
    [fresh] = await claim_due(sessionmaker, "w2", now + timedelta(seconds=2))
    result = await apply_updates(
        sessionmaker,
        owner="w1",
        claims={stale.id: stale},
        updates=[answer(stale, PartitionStatus.FAILED, now)],
        now=now,
    )
    assert (result.stale, sum(result.applied.values())) == (1, 0)
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.status, row.lease_owner, row.fence) == ("in_progress", "w2", 2)
    # Even the same owner name cannot write with an old fence.
    [again] = await claim_due(sessionmaker, "w1", now + timedelta(seconds=40))
    result = await apply_updates(
        sessionmaker,
        owner="w1",
        claims={fresh.id: fresh},
        updates=[answer(fresh, PartitionStatus.FAILED, now)],
        now=now,
    )
    assert result.stale == 1
    result = await apply_updates(
        sessionmaker,
        owner="w1",
        claims={again.id: again},
        updates=[answer(again, PartitionStatus.SUCCEEDED, now, 5)],
        now=now,
    )
    assert (result.stale, result.applied[PartitionStatus.SUCCEEDED], result.completed) == (
        0,
        1,
        [deletion_id],
    )
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.status, row.lease_owner, row.lease_expires_at, row.low_watermark, row.fence) == (
        "succeeded",
        "w1",
        None,
        5,
        3,
    )
    assert await audit_events(sessionmaker, "deletion.partition_failed") == []


async def test_not_due_terminal_and_cancelled_rows_are_not_claimed(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    now = datetime.now(UTC)
    later = await insert_deletion(sessionmaker, targets[:1])
    cancelled = await insert_deletion(sessionmaker, targets[:1], status="cancelled")
    finished = await insert_deletion(sessionmaker, targets[:1])
    async with write_transaction(sessionmaker) as session:
        pd = PartitionDeletion
        await session.execute(
            update(pd).where(pd.deletion_id == later).values(next_attempt_at=now + timedelta(seconds=5))
        )
        await session.execute(update(pd).where(pd.deletion_id == finished).values(status="succeeded"))
    assert await claim_due(sessionmaker, "w1", now) == []
    [row] = await claim_due(sessionmaker, "w1", now + timedelta(seconds=6))
    assert row.deletion_id == later
    assert (await partitions_of(sessionmaker, cancelled))[0].status == "pending"


async def test_outcomes_roll_up_with_audit_in_the_same_transaction(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    claims = await claim_due(sessionmaker, "w1", now)
    by_id = {c.id: c for c in claims}
    first = [
        answer(claims[0], PartitionStatus.SUCCEEDED, now, 5),
        answer(claims[1], PartitionStatus.FAILED, now),
    ]
    result = await apply_updates(sessionmaker, owner="w1", claims=by_id, updates=first, now=now)
    assert result.completed == []
    assert await deletion_status(sessionmaker, deletion_id) == "in_progress"
    rest = [answer(c, PartitionStatus.SUCCEEDED, now, 6) for c in claims[2:]]
    result = await apply_updates(sessionmaker, owner="w1", claims=by_id, updates=rest, now=now)
    assert result.completed == [deletion_id]
    assert await deletion_status(sessionmaker, deletion_id) == "partially_failed"
    [failed] = await audit_events(sessionmaker, "deletion.partition_failed")
    assert failed["details"]["partition"] == 1
    assert failed["details"]["error_code"] == "POLICY_VIOLATION"
    [summary] = await audit_events(sessionmaker, "deletion.completed")
    assert summary["details"]["status"] == "partially_failed"
    outcomes = summary["details"]["partitions"]
    assert list(zip(outcomes["partition"], outcomes["status"], outcomes["low_watermark"], strict=True)) == [
        (0, "succeeded", 5),
        (1, "failed", None),
        (2, "succeeded", 6),
        (3, "succeeded", 6),
    ]
    await assert_chain_ok(sessionmaker)


async def test_renew_and_release_leases(sessionmaker: Maker, targets: list[Target]) -> None:
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    claims = await claim_due(sessionmaker, "w1", now, lease=1)
    async with write_transaction(sessionmaker) as session:
        assert await repo.renew_leases(session, owner="w1", claims=claims, now=now, lease_seconds=60) == 4
    assert await claim_due(sessionmaker, "w2", now + timedelta(seconds=30)) == []
    async with write_transaction(sessionmaker) as session:
        assert await repo.release_leases(session, owner="w1", now=now) == 4
    rows = await partitions_of(sessionmaker, deletion_id)
    assert {(r.lease_owner, r.lease_expires_at, r.status) for r in rows} == {("w1", None, "in_progress")}
    async with write_transaction(sessionmaker) as session:
        # Given back means gone: neither renewed nor released again.
        assert await repo.renew_leases(session, owner="w1", claims=claims, now=now, lease_seconds=60) == 0
        assert await repo.release_leases(session, owner="w1", now=now) == 0
    assert len(await claim_due(sessionmaker, "w2", now)) == 4


async def test_a_deletion_row_is_locked_before_the_roll_up(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    deletion_id = await insert_deletion(sessionmaker, targets[:1])
    async with write_transaction(sessionmaker) as session:
        assert await write_back.lock_deletions(session, [deletion_id, "missing"]) == {deletion_id: "pending"}
        await session.execute(update(Deletion).where(Deletion.id == deletion_id).values(status="in_progress"))
    assert await deletion_status(sessionmaker, deletion_id) == "in_progress"


async def test_written_outcomes_read_back_exactly(sessionmaker: Maker, targets: list[Target]) -> None:
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    claims = await claim_due(sessionmaker, "w1", now)
    messages = ['say "no", then {a,b}', 'back\\slash \\" end', "NULL", '  spaced\n line é ✓, ""']
    codes = ["OFFSET_OUT_OF_RANGE", None, "", "NULL"]
    updates = [
        PartitionUpdate(
            id=c.id,
            fence=c.fence,
            status=PartitionStatus.IN_PROGRESS,
            low_watermark=None if i == 1 else 2**40 + i,
            leader_log_start_offset=None if i == 2 else i,
            error_code=codes[i],
            error_message=messages[i],
            next_attempt_at=now + timedelta(microseconds=123_457 * (i + 1)),
        )
        for i, c in enumerate(claims)
    ]
    async with write_transaction(sessionmaker) as session:
        written = await write_back.write_updates(
            session, updates, deletions=[deletion_id], owner="w1", now=now
        )
    assert written == {c.id for c in claims}
    rows = {row.id: row for row in await partitions_of(sessionmaker, deletion_id)}
    for update_ in updates:
        row = rows[update_.id]
        assert (row.status, row.low_watermark, row.leader_log_start_offset) == (
            "in_progress",
            update_.low_watermark,
            update_.leader_log_start_offset,
        )
        assert (row.error_code, row.error_message) == (update_.error_code, update_.error_message)
        assert row.next_attempt_at.astimezone(UTC) == update_.next_attempt_at
        assert row.lease_expires_at is None


async def test_the_completion_summary_is_every_row_as_stored(sessionmaker: Maker) -> None:
    """Two deletions completed by one write: each summary lists every partition's outcome as its row
    holds it, in (topic, partition) code point order, an offset missing from an answer on a retried
    partition (the second deletion) being the row's own."""
    topics = ["b-x", "B", "a_b", "a-b", "é", "Z", "ab"]
    whole = await insert_deletion(sessionmaker, [Target(t, p, 10 + p) for t in topics for p in (1, 0)])
    kept = await insert_deletion(sessionmaker, [Target(t, 0, 3) for t in topics[:3]])
    now = datetime.now(UTC)
    claims = await claim_due(sessionmaker, "w1", now)
    # kept's partitions as if retried: a row may hold an earlier answer's offsets, so one lacking from
    # this answer is read back (on a first attempt it is known to be null).
    by_id = {c.id: c._replace(attempts=2) if c.deletion_id == kept else c for c in claims}
    updates = [
        answer(
            c, PartitionStatus.FAILED if c.partition else PartitionStatus.SUCCEEDED, now, c.resolved_offset
        )._replace(leader_log_start_offset=None if c.deletion_id == kept and c.topic == "B" else 7)
        for c in claims
    ]
    result = await apply_updates(sessionmaker, owner="w1", claims=by_id, updates=updates, now=now)
    assert sorted(result.completed) == sorted([whole, kept])
    summaries = {
        e["deletion_id"]: e["details"] for e in await audit_events(sessionmaker, "deletion.completed")
    }
    async with write_transaction(sessionmaker) as session:
        read_back = await write_back.partition_outcomes(session, [whole, kept])
    for deletion_id in (whole, kept):
        assert summaries[deletion_id]["partitions"] == read_back[deletion_id]
    assert summaries[whole]["counts"] == {"failed": 7, "succeeded": 7}
    assert summaries[kept]["counts"] == {"succeeded": 3}
    assert read_back[whole]["topic"][::2] == sorted(topics)
    assert set(read_back[whole]["worker"]) == {"w1"}
    await assert_chain_ok(sessionmaker)


async def test_a_stale_row_leaves_the_counts_to_the_database(
    sessionmaker: Maker, targets: list[Target]
) -> None:
    """A batch holding every partition of a deletion, one of them lost to another claim: the roll-up
    counts the rows, and the other worker's write completes the deletion."""
    deletion_id = await insert_deletion(sessionmaker, targets)
    now = datetime.now(UTC)
    claims = await claim_due(sessionmaker, "w1", now, lease=1)
    [taken] = await claim_due(sessionmaker, "w2", now + timedelta(seconds=2), limit=1)
    by_id = {c.id: c for c in claims}
    updates = [answer(c, PartitionStatus.SUCCEEDED, now, 5) for c in claims]
    result = await apply_updates(sessionmaker, owner="w1", claims=by_id, updates=updates, now=now)
    assert (result.stale, result.completed) == (1, [])
    assert await deletion_status(sessionmaker, deletion_id) == "in_progress"
    update_ = answer(taken, PartitionStatus.FAILED, now)
    result = await apply_updates(
        sessionmaker, owner="w2", claims={taken.id: taken}, updates=[update_], now=now
    )
    assert result.completed == [deletion_id]
    [summary] = await audit_events(sessionmaker, "deletion.completed")
    assert summary["details"]["counts"] == {"failed": 1, "succeeded": 3}
    assert sorted(summary["details"]["partitions"]["worker"]) == ["w1", "w1", "w1", "w2"]
    await assert_chain_ok(sessionmaker)
