"""Queries on deletions and their partitions. Repositories flush; the caller commits."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import chain, repeat
from typing import Any, cast

from sqlalchemy import Table, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import Deletion, PartitionDeletion
from app.adapters.db.repositories.deletion_reads import status_counts
from app.domain.deletions import DeletionStatus, PartitionStatus, overall_status
from app.domain.ports import TopicPartition

# Below this many partitions a plain multi-row INSERT is cheaper than COPY's extra round trip.
COPY_MIN_ROWS = 200


@dataclass(frozen=True)
class PlannedPartition:
    """One partition of a new deletion: the offset asked for and the concrete offset to send."""

    partition: TopicPartition
    requested_offset: int
    resolved_offset: int
    spec: dict[str, object] | None = None


async def find_by_idempotency_key(session: AsyncSession, principal: str, key: str) -> Deletion | None:
    query = select(Deletion).where(Deletion.principal == principal, Deletion.idempotency_key == key)
    return (await session.execute(query)).scalar_one_or_none()


async def create_deletion(
    session: AsyncSession, deletion: Deletion, partitions: Sequence[PlannedPartition]
) -> None:
    """Insert ``deletion`` and one pending task row per partition (the executor sets ``deadline_at`` when it
    first claims a row, so the timeout counts from the first send)."""
    session.add(deletion)
    await session.flush()
    pending, created = PartitionStatus.PENDING.value, deletion.created_at
    records = [
        (
            deletion.id,
            *p.partition,
            p.requested_offset,
            p.resolved_offset,
            p.spec,
            pending,
            0,
            0,
            created,
            None,
            created,
        )
        for p in partitions
    ]
    await _insert_partitions(session, records)


TASK_COLUMNS = (
    "deletion_id",
    "topic",
    "partition",
    "requested_offset",
    "resolved_offset",
    "spec",
    "status",
    "attempts",
    "fence",
    "next_attempt_at",
    "deadline_at",
    "updated_at",
)
SPEC = TASK_COLUMNS.index("spec")


async def _insert_partitions(session: AsyncSession, records: list[tuple[Any, ...]]) -> None:
    """Core INSERT (no ORM bookkeeping); on PostgreSQL a large request goes through COPY, inside the
    same transaction: 10,000 rows take a few tens of milliseconds instead of most of a second."""
    connection = await session.connection()
    if connection.dialect.name != "postgresql" or len(records) < COPY_MIN_ROWS:
        rows = [dict(zip(TASK_COLUMNS, record, strict=True)) for record in records]
        await session.execute(insert(cast(Table, PartitionDeletion.__table__)), rows)
        return
    texts: dict[Any, str] = {}  # asyncpg's json codec takes JSON text; specs repeat, encode each once
    copied = [(*r[:SPEC], _json_text(r[SPEC], texts), *r[SPEC + 1 :]) for r in records]
    raw = await connection.get_raw_connection()
    await raw.driver_connection.copy_records_to_table(  # type: ignore[union-attr]
        PartitionDeletion.__tablename__, records=copied, columns=TASK_COLUMNS
    )


def _json_text(value: dict[str, object] | None, texts: dict[Any, str]) -> str | None:
    if value is None:
        return None
    try:
        key: Any = tuple(value.items())
        hash(key)
    except TypeError:
        return json.dumps(value)
    if (text := texts.get(key)) is None:
        text = texts[key] = json.dumps(value)
    return text


async def get_deletion(session: AsyncSession, deletion_id: str) -> Deletion | None:
    """The deletion as an ORM object, for a write transaction that changes it."""
    return await session.get(Deletion, deletion_id)


async def cancel_pending(session: AsyncSession, deletion_id: str, now: datetime) -> list[tuple[str, int]]:
    """Cancel the partitions not yet sent: still pending and not leased by a worker."""
    query = (
        update(PartitionDeletion)
        .where(
            PartitionDeletion.deletion_id == deletion_id,
            PartitionDeletion.status == PartitionStatus.PENDING.value,
            or_(PartitionDeletion.lease_expires_at.is_(None), PartitionDeletion.lease_expires_at < now),
        )
        .values(
            status=PartitionStatus.CANCELLED.value, updated_at=now, lease_owner=None, lease_expires_at=None
        )
        .returning(PartitionDeletion.topic, PartitionDeletion.partition)
    )
    rows = (await session.execute(query, execution_options={"synchronize_session": False})).all()
    return sorted((topic, partition) for topic, partition in rows)


async def refresh_status(session: AsyncSession, deletion: Deletion, now: datetime) -> DeletionStatus:
    """Recompute the deletion's status from its partitions and store it (finished_at once final)."""
    connection = await session.connection()
    counts = await connection.run_sync(status_counts, deletion.id)
    status = overall_status(chain.from_iterable(repeat(s, n) for s, n in counts.items()))
    if status.value != deletion.status:
        deletion.status = status.value
        deletion.updated_at = now
    final = status not in {DeletionStatus.PENDING, DeletionStatus.IN_PROGRESS}
    if final and deletion.finished_at is None:
        deletion.finished_at = now
    await session.flush()
    return status
