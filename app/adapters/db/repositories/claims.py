"""The executor's work queue: partition rows claimed with leases and fenced writes.

A row is *due* when its status is pending, in_progress or leader_truncated, ``next_attempt_at`` has come,
nobody holds a live lease on it, and its deletion is not cancelled. A lease is held while
``lease_expires_at`` is set and in the future; giving it back clears ``lease_expires_at`` but keeps
``lease_owner``, so the row (and the completion audit) names the instance that claimed it last.
Claiming sets the lease, moves pending to in_progress, counts the attempt and bumps ``fence``; every later
write by the claimer names the fence it claimed with, so a worker whose lease expired (and whose row was
claimed again) changes nothing.

PostgreSQL claims with ``SELECT ... FOR UPDATE SKIP LOCKED`` then one UPDATE, in one transaction, so
concurrent instances never wait on each other. SQLite ignores SKIP LOCKED (SQLAlchemy drops it silently);
there the claim is one ``UPDATE ... RETURNING`` inside the BEGIN IMMEDIATE of ``write_transaction``, which
already serializes writers.

The deadline (``deadline_at``) is set on a row's first claim, i.e. counted from the first send: a service
that was down when the request arrived does not fail work it never started.

Functions only flush; the caller's transaction commits.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import BigInteger, Table, any_, bindparam, case, exists, func, literal, or_, select, update
from sqlalchemy import cast as cast_
from sqlalchemy.dialects.postgresql import ARRAY, TIMESTAMP
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from app.adapters.db.models import Deletion, PartitionDeletion
from app.domain.deletions import PartitionStatus

PD = cast(Table, PartitionDeletion.__table__)
CLAIMABLE = (PartitionStatus.PENDING, PartitionStatus.IN_PROGRESS, PartitionStatus.LEADER_TRUNCATED)
# SQLite allows 32,766 bound variables per statement; stay well below it.
_CHUNK = 5_000


@dataclass(frozen=True)
class Claim:
    """One claimed partition row, with what the executor needs from its deletion."""

    id: int
    deletion_id: str
    topic: str
    partition: int
    resolved_offset: int
    status: PartitionStatus
    fence: int
    attempts: int
    deadline_at: datetime
    cluster: str
    leader_only: bool
    timeout_ms: int
    request_id: str


@dataclass(frozen=True)
class PartitionUpdate:
    """The state a worker writes back for one claimed row (applied only if ``fence`` is still current)."""

    id: int
    fence: int
    status: PartitionStatus
    low_watermark: int | None
    leader_log_start_offset: int | None
    error_code: str | None
    error_message: str | None
    next_attempt_at: datetime


def _is_postgresql(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), _CHUNK):
        yield list(ids[start : start + _CHUNK])


def _id_in(ids: Sequence[int], postgresql: bool) -> ColumnElement[bool]:
    if postgresql:
        return PD.c.id == any_(bindparam("claim_ids", list(ids), type_=ARRAY(BigInteger)))
    return PD.c.id.in_(list(ids))


def _due(now: datetime) -> list[ColumnElement[bool]]:
    live_deletion = exists().where(
        Deletion.id == PD.c.deletion_id, Deletion.status != PartitionStatus.CANCELLED.value
    )
    return [
        PD.c.status.in_([status.value for status in CLAIMABLE]),
        PD.c.next_attempt_at <= now,
        or_(PD.c.lease_expires_at.is_(None), PD.c.lease_expires_at <= now),
        live_deletion,
    ]


async def claim_due(
    session: AsyncSession, *, owner: str, now: datetime, lease_seconds: float, limit: int
) -> list[Claim]:
    """Claim up to ``limit`` due rows for ``owner``, oldest ``next_attempt_at`` first."""
    postgresql = _is_postgresql(session)
    due_ids = select(PD.c.id).where(*_due(now)).order_by(PD.c.next_attempt_at, PD.c.id).limit(limit)
    if postgresql:
        locked = (await session.execute(due_ids.with_for_update(skip_locked=True, of=PD))).scalars().all()
        if not locked:
            return []
        target = _id_in(locked, postgresql=True)
    else:
        target = PD.c.id.in_(due_ids.scalar_subquery())
    lease_until = now + timedelta(seconds=lease_seconds)
    values: dict[str, Any] = {
        "lease_owner": owner,
        "lease_expires_at": lease_until,
        "fence": PD.c.fence + 1,
        "attempts": PD.c.attempts + 1,
        "status": case(
            (PD.c.status == PartitionStatus.PENDING.value, PartitionStatus.IN_PROGRESS.value),
            else_=PD.c.status,
        ),
        "updated_at": now,
    }
    if postgresql:
        # In the same statement: a second UPDATE of rows this transaction already changed would run the
        # foreign key check (KEY SHARE on the deletion) and could deadlock with a roll-up holding it.
        values["deadline_at"] = func.coalesce(PD.c.deadline_at, _deadline_sql(now))
    stmt = (
        update(PD)
        .where(target)
        .values(**values)
        .returning(
            PD.c.id,
            PD.c.deletion_id,
            PD.c.topic,
            PD.c.partition,
            PD.c.resolved_offset,
            PD.c.status,
            PD.c.fence,
            PD.c.attempts,
            PD.c.deadline_at,
        )
    )
    rows = (await session.execute(stmt)).all()
    if not rows:
        return []
    deletions = await _deletion_facts(session, {row.deletion_id for row in rows})
    if not postgresql:
        await _start_deadlines(session, rows, deletions, owner=owner, lease_until=lease_until, now=now)
    return [_claim(row, deletions[row.deletion_id], now) for row in sorted(rows, key=lambda r: r.id)]


def _deadline_sql(now: datetime) -> ColumnElement[Any]:
    """PostgreSQL: ``now`` plus the deletion's timeout_ms."""
    timeout_ms = select(Deletion.timeout_ms).where(Deletion.id == PD.c.deletion_id).scalar_subquery()
    start = cast_(bindparam("claim_now", now, type_=TIMESTAMP(timezone=True)), TIMESTAMP(timezone=True))
    return start + func.make_interval(0, 0, 0, 0, 0, 0, timeout_ms / literal(1000.0))


async def _deletion_facts(session: AsyncSession, deletion_ids: set[str]) -> dict[str, Any]:
    stmt = select(
        Deletion.id, Deletion.cluster, Deletion.leader_only, Deletion.timeout_ms, Deletion.request_id
    ).where(Deletion.id.in_(sorted(deletion_ids)))
    return {row.id: row for row in (await session.execute(stmt)).all()}


async def _start_deadlines(
    session: AsyncSession,
    rows: Sequence[Any],
    deletions: dict[str, Any],
    *,
    owner: str,
    lease_until: datetime,
    now: datetime,
) -> None:
    """SQLite: set ``deadline_at`` on the rows claimed for the first time, one statement per deletion
    (BEGIN IMMEDIATE already excludes every other writer)."""
    for deletion_id in sorted({row.deletion_id for row in rows if row.deadline_at is None}):
        deadline = now + timedelta(milliseconds=deletions[deletion_id].timeout_ms)
        await session.execute(
            update(PD)
            .where(
                PD.c.deletion_id == deletion_id,
                PD.c.deadline_at.is_(None),
                PD.c.lease_owner == owner,
                PD.c.lease_expires_at == lease_until,
            )
            .values(deadline_at=deadline)
        )


def _claim(row: Any, deletion: Any, now: datetime) -> Claim:
    deadline = row.deadline_at or now + timedelta(milliseconds=deletion.timeout_ms)
    return Claim(
        id=row.id,
        deletion_id=row.deletion_id,
        topic=row.topic,
        partition=row.partition,
        resolved_offset=row.resolved_offset,
        status=PartitionStatus(row.status),
        fence=row.fence,
        attempts=row.attempts,
        deadline_at=deadline,
        cluster=deletion.cluster,
        leader_only=deletion.leader_only,
        timeout_ms=deletion.timeout_ms,
        request_id=deletion.request_id,
    )


async def renew_leases(
    session: AsyncSession, *, owner: str, claims: Sequence[Claim], now: datetime, lease_seconds: float
) -> int:
    """Extend the leases ``owner`` still holds on ``claims`` (same fence); returns how many it holds."""
    held = 0
    lease_until = now + timedelta(seconds=lease_seconds)
    postgresql = _is_postgresql(session)
    for chunk in _chunks([claim.id for claim in claims]):
        result = await session.execute(
            update(PD)
            .where(_id_in(chunk, postgresql), PD.c.lease_owner == owner, PD.c.lease_expires_at.is_not(None))
            .values(lease_expires_at=lease_until)
        )
        held += cast(int, getattr(result, "rowcount", 0))
    return held


async def release_leases(session: AsyncSession, *, owner: str, now: datetime) -> int:
    """Give back every lease ``owner`` holds, due at once (graceful stop); fences stay as they are."""
    result = await session.execute(
        update(PD)
        .where(PD.c.lease_owner == owner, PD.c.lease_expires_at.is_not(None))
        .values(lease_expires_at=None, next_attempt_at=now, updated_at=now)
    )
    return cast(int, getattr(result, "rowcount", 0))


async def current_fences(session: AsyncSession, *, owner: str, ids: Sequence[int]) -> dict[int, int]:
    """The fence of each row in ``ids`` that ``owner`` still holds. On PostgreSQL the rows stay locked
    until the transaction ends, so no claim can slip in between this check and the write."""
    postgresql = _is_postgresql(session)
    fences: dict[int, int] = {}
    for chunk in _chunks(sorted(ids)):
        stmt = select(PD.c.id, PD.c.fence).where(
            _id_in(chunk, postgresql), PD.c.lease_owner == owner, PD.c.lease_expires_at.is_not(None)
        )
        if postgresql:
            stmt = stmt.with_for_update(of=PD)
        fences.update({row.id: row.fence for row in (await session.execute(stmt)).all()})
    return fences


async def write_updates(session: AsyncSession, updates: Sequence[PartitionUpdate], *, now: datetime) -> None:
    """Write ``updates`` in one executemany, each guarded by its fence, giving the leases back."""
    if not updates:
        return
    stmt = (
        update(PD)
        .where(PD.c.id == bindparam("b_id"), PD.c.fence == bindparam("b_fence"))
        .values(
            status=bindparam("b_status"),
            # An answer without offsets (an error) keeps the last ones known: both only ever grow.
            low_watermark=func.coalesce(bindparam("b_low_watermark", type_=BigInteger), PD.c.low_watermark),
            leader_log_start_offset=func.coalesce(
                bindparam("b_llso", type_=BigInteger), PD.c.leader_log_start_offset
            ),
            error_code=bindparam("b_error_code"),
            error_message=bindparam("b_error_message"),
            next_attempt_at=bindparam("b_next_attempt_at"),
            lease_expires_at=None,
            updated_at=now,
        )
    )
    params = [
        {
            "b_id": u.id,
            "b_fence": u.fence,
            "b_status": u.status.value,
            "b_low_watermark": u.low_watermark,
            "b_llso": u.leader_log_start_offset,
            "b_error_code": u.error_code,
            "b_error_message": u.error_message,
            "b_next_attempt_at": u.next_attempt_at,
        }
        for u in updates
    ]
    await session.execute(stmt, params)


async def lock_deletions(session: AsyncSession, deletion_ids: Sequence[str]) -> dict[str, str]:
    """Lock the deletions (id order, so two workers never deadlock) and return their statuses.

    Rolling a deletion's status up from its partitions must see every other worker's committed writes:
    holding the deletion row serializes the roll-ups of one deletion (SQLite: BEGIN IMMEDIATE does)."""
    stmt = (
        select(Deletion.id, Deletion.status)
        .where(Deletion.id.in_(sorted(deletion_ids)))
        .order_by(Deletion.id)
    )
    if _is_postgresql(session):
        stmt = stmt.with_for_update()
    return {row.id: row.status for row in (await session.execute(stmt)).all()}


async def status_counts(session: AsyncSession, deletion_id: str) -> dict[PartitionStatus, int]:
    stmt = select(PD.c.status, func.count()).where(PD.c.deletion_id == deletion_id).group_by(PD.c.status)
    return {PartitionStatus(status): count for status, count in (await session.execute(stmt)).all()}


async def set_deletion_status(
    session: AsyncSession, deletion_id: str, status: str, *, now: datetime, finished: bool
) -> None:
    await session.execute(
        update(Deletion)
        .where(Deletion.id == deletion_id)
        .values(status=status, updated_at=now, finished_at=now if finished else None)
        .execution_options(synchronize_session=False)
    )


async def partition_outcomes(session: AsyncSession, deletion_id: str) -> list[dict[str, Any]]:
    """Every partition's outcome, for the completion summary (read once per deletion)."""
    stmt = (
        select(
            PD.c.topic,
            PD.c.partition,
            PD.c.resolved_offset,
            PD.c.status,
            PD.c.low_watermark,
            PD.c.leader_log_start_offset,
            PD.c.error_code,
            PD.c.attempts,
            PD.c.fence,
            PD.c.lease_owner.label("worker"),
        )
        .where(PD.c.deletion_id == deletion_id)
        .order_by(PD.c.topic, PD.c.partition)
    )
    return [dict(row._mapping) for row in (await session.execute(stmt)).all()]
