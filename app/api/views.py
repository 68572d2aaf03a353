"""Building response models from rows, and the shared look-ups the routers need.

Reads are Core rows (``app.adapters.db.repositories.deletion_reads``, run by ``run_read``); each response
model is validated once, from plain values, and returned as is (FastAPI serializes it with the route's
``response_model``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from operator import attrgetter
from typing import Any, TypeVar

from sqlalchemy import Row
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import Deletion
from app.adapters.db.repositories import deletion_reads as reads
from app.adapters.db.repositories import deletions as repo
from app.adapters.db.repositories.deletion_reads import DeletionRecord, FirstPartitions
from app.adapters.db.session import run_read
from app.api.deps import Authorization, Services
from app.api.pagination import encode_cursor
from app.api.problems import invalid_parameter
from app.auth import Principal
from app.domain.deletions import DeletionScope, PartitionStatus
from app.errors import NotFound
from app.schemas.deletions import DeletionRead, DeletionSummary, PartitionRead

D = TypeVar("D", bound=DeletionScope)
T = TypeVar("T")


def page_limit(services: Services, limit: int | None) -> int:
    limits = services.settings.limits
    if limit is None:
        return limits.page_size
    if limit > limits.max_page_size:
        raise invalid_parameter("limit", f"limit must be at most {limits.max_page_size}")
    return limit


# Deletions read at a time while filling a page past ones the caller may not see (doubling from a page).
MAX_SCAN_BATCH = 1000


async def visible_deletions(
    services: Services,
    principal: Principal,
    filters: reads.DeletionFilters,
    before: tuple[datetime, str] | None,
    size: int,
) -> tuple[list[DeletionRecord], bool]:
    """Up to ``size`` deletions the caller may see, newest first after ``before``, and whether another
    one they may see follows. Ones they may not see are skipped, however many: a page, its length and
    its cursor say nothing about them."""
    shown: list[DeletionRecord] = []
    batch = size + 1
    while True:
        rows = await run_read(services.sessionmaker, _deletions_read(filters, before, batch))
        for row in rows:
            if await services.authorization.can_view(principal, row):
                if len(shown) == size:
                    return shown, True
                shown.append(row)
        if len(rows) < batch:
            return shown, False
        before, batch = (rows[-1].created_at, rows[-1].id), min(batch * 2, MAX_SCAN_BATCH)


def _deletions_read(
    filters: reads.DeletionFilters, before: tuple[datetime, str] | None, limit: int
) -> Callable[[Connection], list[DeletionRecord]]:
    return lambda connection: reads.list_deletions(connection, filters, before=before, limit=limit)


async def visible_deletion(
    session: AsyncSession, authorization: Authorization, principal: Principal, deletion_id: str
) -> Deletion:
    """The deletion (ORM, for a transaction that changes it), or 404 when it does not exist or the caller
    may not see it (no 403 oracle)."""
    return await visible(authorization, principal, deletion_id, await repo.get_deletion(session, deletion_id))


async def visible(
    authorization: Authorization, principal: Principal, deletion_id: str, deletion: D | None
) -> D:
    """``deletion``, or 404 when it does not exist or the caller may not see it (no 403 oracle)."""
    found = None if deletion is None else (deletion, None)
    return (await visible_with(authorization, principal, deletion_id, found))[0]


async def visible_with(
    authorization: Authorization, principal: Principal, deletion_id: str, found: tuple[D, T] | None
) -> tuple[D, T]:
    """``found`` (a deletion and what was read with it), or 404 exactly as :func:`visible`."""
    if found is None or not await authorization.can_view(principal, found[0]):
        raise NotFound(f"No deletion {deletion_id!r}.")
    return found


def partition_read(row: Row[Any]) -> PartitionRead:
    return PartitionRead.model_validate(row, from_attributes=True)


def partition_cursor(rows: Sequence[Row[Any]], limit: int) -> str | None:
    return encode_cursor(rows[-1].topic, rows[-1].partition) if len(rows) == limit else None


def deletion_summary(deletion: DeletionRecord) -> DeletionSummary:
    return DeletionSummary.model_validate(deletion, from_attributes=True)


def accepted_deletion_read(
    deletion: Deletion, planned: Sequence[repo.PlannedPartition], partition_limit: int
) -> DeletionRead:
    """The response for a deletion just stored, built without reading it back: all partitions pending,
    the first ``partition_limit`` of them in (topic, partition) order (Python's string order: beyond one
    page, for one topic only), with the cursor ``deletion_read`` would give."""
    ordered = sorted(planned, key=attrgetter("partition"))[:partition_limit]
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
