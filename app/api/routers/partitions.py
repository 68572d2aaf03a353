"""/v1/deletions/{id}/partitions: per-partition status of a deletion."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from app.api.pagination import PARTITION, decode_cursor, page_limit, partition_cursor, partition_read
from app.api.routers.deletions import DeletionId
from app.api.routing import DatabaseRoute, RuntimeDep
from app.auth import PrincipalDep
from app.domain.deletion_requests import PartitionStatus
from app.schemas.common import PageLimit, problem_responses
from app.schemas.deletions import PartitionNumber, PartitionPage, PartitionRead, TopicName
from app.services.deletions import visibility

router = APIRouter(
    prefix="/v1/deletions/{deletion_id}/partitions", tags=["deletions"], route_class=DatabaseRoute
)


@router.get("", response_model=PartitionPage, responses=problem_responses(401, 404, 422))
async def list_partitions(
    deletion_id: DeletionId,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    status: Annotated[PartitionStatus | None, Query(description="Only partitions in this status")] = None,
    cursor: Annotated[
        str | None, Query(min_length=1, max_length=512, description="The next_cursor of the previous page")
    ] = None,
    limit: PageLimit = None,
) -> PartitionPage:
    """List a deletion's partitions in (topic, partition) order, optionally by status."""
    size = page_limit(runtime, limit)
    after = decode_cursor(cursor, str, PARTITION) if cursor is not None else None
    start = (after[0], after[1]) if after else None
    rows = await visibility.read_partitions(
        runtime, principal, deletion_id, status=status, after=start, limit=size
    )
    return PartitionPage(
        items=[partition_read(row) for row in rows], next_cursor=partition_cursor(rows, size)
    )


@router.get("/{topic}/{partition}", response_model=PartitionRead, responses=problem_responses(401, 404, 422))
async def get_partition(
    deletion_id: DeletionId,
    topic: Annotated[TopicName, Path(description="The topic")],
    partition: Annotated[PartitionNumber, Path(description="The partition")],
    principal: PrincipalDep,
    runtime: RuntimeDep,
) -> PartitionRead:
    """Read one partition of a deletion: offsets, status, watermarks, Kafka error and attempts."""
    return partition_read(await visibility.read_partition(runtime, principal, deletion_id, topic, partition))
