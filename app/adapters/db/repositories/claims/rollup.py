"""Rolling a deletion's status up from its partitions, and the completion summary."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import groupby
from operator import itemgetter
from typing import Any, NamedTuple

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import Deletion
from app.adapters.db.repositories.claims.common import DELETIONS, PD, any_of, is_postgresql
from app.domain.deletions import DeletionStatus, PartitionStatus


class LockedDeletion(NamedTuple):
    status: str
    partition_count: int  # how many partition rows it has


async def lock_deletions(session: AsyncSession, deletion_ids: Sequence[str]) -> dict[str, LockedDeletion]:
    """Lock the deletions (id order, so two workers never deadlock) and return their statuses and
    partition counts.

    Rolling a deletion's status up from its partitions must see every other worker's committed writes:
    holding the deletion row serializes the roll-ups of one deletion (SQLite: BEGIN IMMEDIATE does)."""
    stmt = (
        select(Deletion.id, Deletion.status, Deletion.partition_count)
        .where(any_of(DELETIONS.c.id, deletion_ids, is_postgresql(session)))
        .order_by(Deletion.id)
    )
    if is_postgresql(session):
        stmt = stmt.with_for_update()
    rows = (await session.execute(stmt)).all()
    return {row.id: LockedDeletion(row.status, row.partition_count) for row in rows}


async def status_counts(
    session: AsyncSession, deletion_ids: Sequence[str]
) -> dict[str, dict[PartitionStatus, int]]:
    """Per deletion, how many of its partitions are in each status (one query for all of them)."""
    stmt = (
        select(PD.c.deletion_id, PD.c.status, func.count())
        .where(any_of(PD.c.deletion_id, deletion_ids, is_postgresql(session)))
        .group_by(PD.c.deletion_id, PD.c.status)
    )
    counts: dict[str, dict[PartitionStatus, int]] = {deletion_id: {} for deletion_id in deletion_ids}
    for deletion_id, status, count in (await session.execute(stmt)).all():
        counts[deletion_id][PartitionStatus(status)] = count
    return counts


async def set_deletion_status(
    session: AsyncSession, deletion_ids: Sequence[str], status: str, *, now: datetime, finished: bool
) -> None:
    """Move ``deletion_ids`` to ``status`` (one statement, however many deletions share it)."""
    await session.execute(
        update(Deletion)
        .where(any_of(DELETIONS.c.id, deletion_ids, is_postgresql(session)))
        .values(status=status, updated_at=now, finished_at=now if finished else None)
        .execution_options(synchronize_session=False)
    )


OUTCOME_COLUMNS = (
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
OUTCOME_KEYS = tuple(column.key for column in OUTCOME_COLUMNS)


async def partition_outcomes(
    session: AsyncSession, deletion_ids: Sequence[str]
) -> dict[str, dict[str, list[Any]]]:
    """Every partition's outcome per deletion, for the completion summaries (one query for all), column
    by column (``OUTCOME_COLUMNS``' keys), each in (topic, partition) order: the i-th entries of the
    lists are one partition. Columns keep a 10,000-partition summary cheap to encode and hash."""
    postgresql = is_postgresql(session)
    # Topics in code point order on both databases (SQLite's BINARY collation is), whatever the PostgreSQL
    # database's collation: the order the worker sorts a summary it holds in (app.worker.outcomes).
    topic = PD.c.topic.collate("C") if postgresql else PD.c.topic
    stmt = (
        select(PD.c.deletion_id, *OUTCOME_COLUMNS)
        .where(any_of(PD.c.deletion_id, deletion_ids, postgresql))
        .order_by(PD.c.deletion_id, topic, PD.c.partition)
    )
    rows = (await session.execute(stmt)).all()
    outcomes: dict[str, dict[str, list[Any]]] = {d: {key: [] for key in OUTCOME_KEYS} for d in deletion_ids}
    for deletion_id, group in groupby(rows, key=itemgetter(0)):
        columns = list(zip(*group, strict=True))[1:]
        outcomes[deletion_id] = {key: list(values) for key, values in zip(OUTCOME_KEYS, columns, strict=True)}
    return outcomes


async def mark_started(session: AsyncSession, deletion_ids: Sequence[str], *, now: datetime) -> None:
    """pending (or approved) -> in_progress for deletions whose partitions were just claimed. Its own short
    transaction after the claim: taking deletion row locks inside the claim (after partition locks) would
    invert the write-back's lock order."""
    await session.execute(
        update(Deletion)
        .where(
            any_of(DELETIONS.c.id, deletion_ids, is_postgresql(session)),
            Deletion.status.in_((DeletionStatus.PENDING.value, DeletionStatus.APPROVED.value)),
        )
        .values(status=DeletionStatus.IN_PROGRESS.value, updated_at=now)
        .execution_options(synchronize_session=False)
    )
