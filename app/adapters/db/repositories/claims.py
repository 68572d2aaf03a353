"""The executor's work queue: partition rows claimed with leases (their fenced writes: ``write_back``).

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

A new deletion's first batch can be claimed by the transaction that stores it (``Lease``): its first
rows are inserted in the state a claim leaves them in and come back as claims from the insert
(``deletions.create_deletions``; SQLite reads them back with ``leased_claims``), so the accepting
instance's executor sends them at once, without a claim round of its own. To every other instance they
are rows under a live lease, like any claimed row.

Functions only flush; the caller's transaction commits.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from operator import itemgetter
from typing import Any, cast

from sqlalchemy import BigInteger, any_, bindparam, case, func, literal, or_, select, update
from sqlalchemy import cast as cast_
from sqlalchemy.dialects.postgresql import ARRAY, TIMESTAMP
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from app.adapters.db.models import DELETIONS, PD, Deletion
from app.adapters.db.repositories.write_back import CHUNK, any_of, is_postgresql
from app.domain.deletion_requests import CLAIMABLE_DELETION_STATUSES, PartitionStatus
from app.domain.ports import Claim

CLAIMABLE = (PartitionStatus.PENDING, PartitionStatus.IN_PROGRESS, PartitionStatus.LEADER_TRUNCATED)
CLAIM_COLUMNS = (
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
STATUSES = {status.value: status for status in PartitionStatus}
ACTIVE_DELETION = tuple(sorted(status.value for status in CLAIMABLE_DELETION_STATUSES))
# A deletion's cluster, leader_only, timeout_ms and request_id: what each of its claims carries.
DeletionFacts = tuple[str, bool, int, str]


def chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), CHUNK):
        yield list(ids[start : start + CHUNK])


def id_in(ids: Sequence[int], postgresql: bool) -> ColumnElement[bool]:
    if postgresql:
        return PD.c.id == any_(bindparam("claim_ids", list(ids), type_=ARRAY(BigInteger)))
    return PD.c.id.in_(list(ids))


def _due(now: datetime, active: ColumnElement[bool]) -> list[ColumnElement[bool]]:
    return [
        active,
        PD.c.status.in_([status.value for status in CLAIMABLE]),
        PD.c.next_attempt_at <= now,
        or_(PD.c.lease_expires_at.is_(None), PD.c.lease_expires_at <= now),
    ]


async def _of_active_deletions(session: AsyncSession, postgresql: bool) -> ColumnElement[bool] | None:
    """Partition rows of the deletions still active (None when there are none): partition rows have no
    index on a column the write-back changes (so it can update them in place), so due rows are found
    through their deletions, which are pending or in progress while any of their partitions is claimable
    (the status is rolled up in every transaction that changes its partitions').

    PostgreSQL: the active deletions are read first and named in the claim, so the planner sees how few
    they are and reads their partitions through the ``(deletion_id, topic, partition)`` index."""
    active = select(DELETIONS.c.id).where(DELETIONS.c.status.in_(ACTIVE_DELETION))
    if not postgresql:
        return PD.c.deletion_id.in_(active)
    ids = (await session.execute(active)).scalars().all()
    return any_of(PD.c.deletion_id, ids, postgresql) if ids else None


async def claim_due(
    session: AsyncSession, *, owner: str, now: datetime, lease_seconds: float, limit: int
) -> list[Claim]:
    """Claim up to ``limit`` due rows for ``owner``, oldest ``next_attempt_at`` first: one UPDATE statement
    (PostgreSQL: its rows come from a ``FOR UPDATE SKIP LOCKED`` common table expression)."""
    postgresql = is_postgresql(session)
    active = await _of_active_deletions(session, postgresql)
    if active is None:
        return []
    due_ids = select(PD.c.id).where(*_due(now, active)).order_by(PD.c.next_attempt_at, PD.c.id).limit(limit)
    if postgresql:
        # Materialized, so the locking subquery runs exactly once; rows other claimers hold are skipped.
        locked = due_ids.with_for_update(skip_locked=True, of=PD).cte("due").prefix_with("MATERIALIZED")
        target = PD.c.id == locked.c.id
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
        # In the same statement: a second UPDATE would write every claimed row again.
        values["deadline_at"] = func.coalesce(PD.c.deadline_at, _deadline_sql(now))
    stmt = update(PD).where(target).values(**values).returning(*CLAIM_COLUMNS)
    rows = (await session.execute(stmt)).all()
    if not rows:
        return []
    deletions = await _deletion_facts(session, {row.deletion_id for row in rows})
    if not postgresql:
        await _start_deadlines(session, rows, deletions, owner=owner, lease_until=lease_until, now=now)
    return _claims(sorted(rows, key=itemgetter(0)), deletions, now)


def _deadline_sql(now: datetime) -> ColumnElement[Any]:
    """PostgreSQL: ``now`` plus the deletion's timeout_ms."""
    timeout_ms = select(Deletion.timeout_ms).where(Deletion.id == PD.c.deletion_id).scalar_subquery()
    start = cast_(bindparam("claim_now", now, type_=TIMESTAMP(timezone=True)), TIMESTAMP(timezone=True))
    return start + func.make_interval(0, 0, 0, 0, 0, 0, timeout_ms / literal(1000.0))


async def _deletion_facts(session: AsyncSession, deletion_ids: set[str]) -> dict[str, DeletionFacts]:
    """Per deletion: cluster, leader_only, timeout_ms, request_id."""
    stmt = select(
        Deletion.id, Deletion.cluster, Deletion.leader_only, Deletion.timeout_ms, Deletion.request_id
    ).where(any_of(DELETIONS.c.id, deletion_ids, is_postgresql(session)))
    return {row[0]: tuple(row[1:]) for row in (await session.execute(stmt)).all()}  # type: ignore[misc]


async def _start_deadlines(
    session: AsyncSession,
    rows: Sequence[Any],
    deletions: dict[str, DeletionFacts],
    *,
    owner: str,
    lease_until: datetime,
    now: datetime,
) -> None:
    """SQLite: set ``deadline_at`` on the rows claimed for the first time, one statement per deletion
    (BEGIN IMMEDIATE already excludes every other writer)."""
    for deletion_id in sorted({row.deletion_id for row in rows if row.deadline_at is None}):
        deadline = now + timedelta(milliseconds=deletions[deletion_id][2])
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


def _claims(rows: Sequence[Any], deletions: dict[str, DeletionFacts], now: datetime) -> list[Claim]:
    """Claims from ``CLAIM_COLUMNS`` rows, unpacked as tuples (a Row's attribute access costs a lookup
    per column, which shows at 10,000 rows)."""
    claims = []
    for id_, deletion_id, topic, partition, offset, status, fence, attempts, deadline_at in rows:
        cluster, leader_only, timeout_ms, request_id = deletions[deletion_id]
        deadline = deadline_at or now + timedelta(milliseconds=timeout_ms)
        claims.append(
            Claim(
                id_,
                deletion_id,
                topic,
                partition,
                offset,
                STATUSES[status],
                fence,
                attempts,
                deadline,
                cluster,
                leader_only,
                timeout_ms,
                request_id,
            )
        )
    return claims


async def renew_leases(
    session: AsyncSession, *, owner: str, claims: Sequence[Claim], now: datetime, lease_seconds: float
) -> int:
    """Extend the leases ``owner`` still holds on ``claims`` (same fence); returns how many it holds."""
    held = 0
    lease_until = now + timedelta(seconds=lease_seconds)
    postgresql = is_postgresql(session)
    # Named by their deletions too: on ids alone PostgreSQL may scan the whole table for a large batch.
    of_deletions = any_of(PD.c.deletion_id, {claim.deletion_id for claim in claims}, postgresql)
    for chunk in chunks([claim.id for claim in claims]):
        result = await session.execute(
            update(PD)
            .where(
                id_in(chunk, postgresql),
                of_deletions,
                PD.c.lease_owner == owner,
                PD.c.lease_expires_at.is_not(None),
            )
            .values(lease_expires_at=lease_until)
        )
        held += cast(int, getattr(result, "rowcount", 0))
    return held


async def release_leases(session: AsyncSession, *, owner: str, now: datetime) -> int:
    """Give back every lease ``owner`` holds, due at once (graceful stop); fences stay as they are. Leased
    rows are rows of active deletions (a write-back gives the lease back)."""
    active = await _of_active_deletions(session, is_postgresql(session))
    if active is None:
        return 0
    result = await session.execute(
        update(PD)
        .where(active, PD.c.lease_owner == owner, PD.c.lease_expires_at.is_not(None))
        .values(lease_expires_at=None, next_attempt_at=now, updated_at=now)
    )
    return cast(int, getattr(result, "rowcount", 0))
