"""Building response models from rows, and the shared look-ups the routers need.

Reads are Core rows (``app.adapters.db.repositories.deletion_reads``); each response model is validated once,
from plain values, and returned as is (FastAPI serializes it with the route's ``response_model``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.adapters.db.models import Deletion
from app.adapters.db.repositories import deletion_reads as reads
from app.adapters.db.repositories import deletions as repo
from app.adapters.db.repositories.deletion_reads import DeletionRecord
from app.api.deps import Authorization, Services
from app.api.pagination import encode_cursor
from app.api.problems import invalid_parameter
from app.api.schemas.deletions import DeletionRead, DeletionSummary, PartitionRead
from app.auth import Principal
from app.domain.deletions import PartitionStatus
from app.errors import NotFound


def page_limit(services: Services, limit: int | None) -> int:
    limits = services.settings.limits
    if limit is None:
        return limits.page_size
    if limit > limits.max_page_size:
        raise invalid_parameter("limit", f"limit must be at most {limits.max_page_size}")
    return limit


async def visible_deletion(
    session: AsyncSession, authorization: Authorization, principal: Principal, deletion_id: str
) -> Deletion:
    """The deletion (ORM, for a transaction that changes it), or 404 when it does not exist or the caller
    may not see it (no 403 oracle)."""
    deletion = await repo.get_deletion(session, deletion_id)
    if deletion is None or not await authorization.can_view(principal, deletion):
        raise NotFound(f"No deletion {deletion_id!r}.")
    return deletion


async def visible_record(
    connection: AsyncConnection, authorization: Authorization, principal: Principal, deletion_id: str
) -> DeletionRecord:
    """The deletion as the API shows it, or 404 exactly as :func:`visible_deletion`."""
    deletion = await reads.read_deletion(connection, deletion_id)
    if deletion is None or not await authorization.can_view(principal, deletion):
        raise NotFound(f"No deletion {deletion_id!r}.")
    return deletion


def partition_read(row: Row[Any]) -> PartitionRead:
    return PartitionRead.model_validate(row, from_attributes=True)


def partition_cursor(rows: Sequence[Row[Any]], limit: int) -> str | None:
    return encode_cursor(rows[-1].topic, rows[-1].partition) if len(rows) == limit else None


def deletion_summary(deletion: DeletionRecord) -> DeletionSummary:
    return DeletionSummary.model_validate(deletion, from_attributes=True)


def accepted_deletion_read(deletion: Deletion, planned: Sequence[repo.PlannedPartition]) -> DeletionRead:
    """The response for a deletion just stored, built without reading it back: all partitions pending."""
    ordered = sorted(planned, key=lambda p: (p.partition.topic, p.partition.partition))
    pending = PartitionStatus.PENDING
    partitions = [
        {
            "topic": p.partition.topic,
            "partition": p.partition.partition,
            "requested_offset": p.requested_offset,
            "resolved_offset": p.resolved_offset,
            "spec": p.spec,
            "status": pending,
            "low_watermark": None,
            "leader_log_start_offset": None,
            "error_code": None,
            "error_message": None,
            "attempts": 0,
            "updated_at": deletion.created_at,
        }
        for p in ordered
    ]
    return _deletion_read(reads.record_of(deletion), {pending: len(planned)}, partitions, None)


async def deletion_read(
    connection: AsyncConnection, deletion: DeletionRecord, partition_limit: int
) -> DeletionRead:
    rows = await reads.list_partitions(connection, deletion.id, limit=partition_limit)
    # A deletion's partitions are all inserted with it: when the page holds all of them, count them
    # here instead of asking the database a second time.
    if len(rows) == deletion.partition_count:
        counts = dict(Counter(PartitionStatus(row.status) for row in rows))
    else:
        counts = await reads.status_counts(connection, deletion.id)
    more = deletion.partition_count > len(rows)
    return _deletion_read(deletion, counts, rows, partition_cursor(rows, partition_limit) if more else None)


def _deletion_read(
    deletion: DeletionRecord,
    counts: dict[PartitionStatus, int],
    partitions: Sequence[Row[Any] | dict[str, Any]],
    partitions_next: str | None,
) -> DeletionRead:
    return DeletionRead.model_validate(
        {
            "id": deletion.id,
            "cluster": deletion.cluster,
            "principal": deletion.principal,
            "reason": deletion.reason,
            "leader_only": deletion.leader_only,
            "timeout_ms": deletion.timeout_ms,
            "status": deletion.status,
            "partition_count": deletion.partition_count,
            "topics": deletion.topics,
            "created_at": deletion.created_at,
            "updated_at": deletion.updated_at,
            "finished_at": deletion.finished_at,
            "request_id": deletion.request_id,
            "counts": counts,
            "partitions": partitions,
            "partitions_next": partitions_next,
        },
        from_attributes=True,
    )
