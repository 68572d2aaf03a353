"""Cancelling a deletion's partitions that were not sent yet, and its status recomputed after."""

from __future__ import annotations

from datetime import datetime
from itertools import chain, repeat

from sqlalchemy import or_, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import Deletion, PartitionDeletion
from app.adapters.db.repositories.deletion_reads import status_counts
from app.domain.deletion_requests import DeletionStatus, PartitionStatus, overall_status


async def cancel_pending(session: AsyncSession, deletion_id: str, now: datetime) -> list[tuple[str, int]]:
    """Cancel the partitions not yet sent: awaiting approval, or still pending and not leased by a worker."""
    query = (
        update(PartitionDeletion)
        .where(
            PartitionDeletion.deletion_id == deletion_id,
            PartitionDeletion.status.in_(
                (PartitionStatus.PENDING.value, PartitionStatus.AWAITING_APPROVAL.value)
            ),
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
    final = status not in {
        DeletionStatus.AWAITING_APPROVAL,
        DeletionStatus.PENDING,
        DeletionStatus.IN_PROGRESS,
    }
    if final and deletion.finished_at is None:
        deletion.finished_at = now
    await session.flush()
    return status
