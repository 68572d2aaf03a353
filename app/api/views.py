"""Building response models from rows, and the page size a request asks for.

Reads are Core rows (``app.adapters.db.repositories.deletion_reads``, run by ``run_read``); each response
model is validated once, from plain values, and returned as is (FastAPI serializes it with the route's
``response_model``).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any, TypeVar

from sqlalchemy import Row

from app.adapters.db.models import Deletion
from app.adapters.db.repositories import deletions as repo
from app.adapters.db.repositories.deletion_reads import DeletionRecord, FirstPartitions
from app.api.pagination import encode_cursor
from app.api.problems import invalid_parameter
from app.domain.deletion_requests import DeletionScope, DeletionStatus, PartitionStatus
from app.schemas.deletions import DeletionRead, DeletionSummary, PartitionRead
from app.services.runtime import Runtime

D = TypeVar("D", bound=DeletionScope)
T = TypeVar("T")


def page_limit(runtime: Runtime, limit: int | None) -> int:
    limits = runtime.settings.limits
    if limit is None:
        return limits.page_size
    if limit > limits.max_page_size:
        raise invalid_parameter("limit", f"limit must be at most {limits.max_page_size}")
    return limit


def partition_read(row: Row[Any]) -> PartitionRead:
    return PartitionRead.model_validate(row, from_attributes=True)


def partition_cursor(rows: Sequence[Row[Any]], limit: int) -> str | None:
    return encode_cursor(rows[-1].topic, rows[-1].partition) if len(rows) == limit else None


def deletion_summary(deletion: DeletionRecord) -> DeletionSummary:
    return DeletionSummary.model_validate(deletion, from_attributes=True)


def accepted_deletion_read(
    deletion: Deletion, planned: Sequence[repo.PlannedPartition], partition_limit: int
) -> DeletionRead:
    """The response for a deletion just stored, built without reading it back: all partitions pending (or
    awaiting approval), the first ``partition_limit`` of them in (topic, partition) order (Python's string
    order: beyond one page, for one topic only), with the cursor ``deletion_read`` would give."""
    ordered = sorted(planned, key=attrgetter("partition"))[:partition_limit]
    waiting = deletion.status == DeletionStatus.AWAITING_APPROVAL.value
    pending = PartitionStatus.AWAITING_APPROVAL if waiting else PartitionStatus.PENDING
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
    last = ordered[-1].partition
    more = len(planned) > len(ordered)
    cursor = encode_cursor(last.topic, last.partition) if more else None
    return _deletion_read(deletion, {pending: len(planned)}, partitions, cursor)


def deletion_read(deletion: DeletionRecord, first: FirstPartitions, partition_limit: int) -> DeletionRead:
    rows = first.rows
    more = deletion.partition_count > len(rows)
    return _deletion_read(
        deletion, first.counts, rows, partition_cursor(rows, partition_limit) if more else None
    )


def _deletion_read(
    deletion: DeletionRecord | Deletion,
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
