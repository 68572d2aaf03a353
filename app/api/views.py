"""Building response models from rows, and the shared look-ups the routers need."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import Deletion, PartitionDeletion
from app.adapters.db.repositories import deletions as repo
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
    """The deletion, or 404 when it does not exist or the caller may not see it (no 403 oracle)."""
    deletion = await repo.get_deletion(session, deletion_id)
    if deletion is None or not await authorization.can_view(principal, deletion):
        raise NotFound(f"No deletion {deletion_id!r}.")
    return deletion


def partition_read(row: PartitionDeletion) -> PartitionRead:
    return PartitionRead.model_validate(row, from_attributes=True)


def partition_cursor(rows: list[PartitionDeletion], limit: int) -> str | None:
    return encode_cursor(rows[-1].topic, rows[-1].partition) if len(rows) == limit else None


def deletion_summary(deletion: Deletion) -> DeletionSummary:
    return DeletionSummary.model_validate(deletion, from_attributes=True)


def accepted_deletion_read(deletion: Deletion, planned: Sequence[repo.PlannedPartition]) -> DeletionRead:
    """The response for a deletion just stored, built without reading it back: all partitions pending."""
    ordered = sorted(planned, key=lambda p: (p.partition.topic, p.partition.partition))
    return DeletionRead(
        **deletion_summary(deletion).model_dump(),
        request_id=deletion.request_id,
        counts={PartitionStatus.PENDING: len(planned)},
        partitions=[
            PartitionRead(
                topic=p.partition.topic,
                partition=p.partition.partition,
                requested_offset=p.requested_offset,
                resolved_offset=p.resolved_offset,
                spec=p.spec,
                status=PartitionStatus.PENDING,
                low_watermark=None,
                leader_log_start_offset=None,
                error_code=None,
                error_message=None,
                attempts=0,
                updated_at=deletion.created_at,
            )
            for p in ordered
        ],
        partitions_next=None,
    )


async def deletion_read(session: AsyncSession, deletion: Deletion, partition_limit: int) -> DeletionRead:
    rows = await repo.list_partitions(session, deletion.id, limit=partition_limit)
    # A deletion's partitions are all inserted with it: when the page holds all of them, count them
    # here instead of asking the database a second time.
    if len(rows) == deletion.partition_count:
        counts = dict(Counter(PartitionStatus(row.status) for row in rows))
    else:
        counts = await repo.status_counts(session, deletion.id)
    summary = deletion_summary(deletion)
    return DeletionRead(
        **summary.model_dump(),
        request_id=deletion.request_id,
        counts=counts,
        partitions=[partition_read(row) for row in rows],
        partitions_next=partition_cursor(rows, partition_limit)
        if deletion.partition_count > len(rows)
        else None,
    )
