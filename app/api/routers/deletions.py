"""/v1/deletions: submit, list, read and cancel deletion requests, and the responses built from their rows.

Reads are Core rows (``app.adapters.db.repositories.deletion_reads``, run by ``run_read``); each response
model is validated once, from plain values, and returned as is (FastAPI serializes it with the route's
``response_model``).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Path, Query, Response
from sqlalchemy import Row

from app.adapters.db.models import Deletion
from app.adapters.db.repositories import deletion_reads as reads
from app.adapters.db.repositories import deletions as repo
from app.adapters.db.repositories.deletion_reads import DeletionRecord, FirstPartitions
from app.api.examples import DELETION_EXAMPLES
from app.api.pagination import cursor_time, decode_cursor, encode_cursor, page_limit, partition_cursor
from app.api.response_examples import ACCEPTED_EXAMPLE, PREVIEW_EXAMPLE
from app.api.routing import RequestIdDep, RuntimeDep, StrictJsonRoute
from app.auth import PrincipalDep
from app.domain.deletion_requests import DeletionStatus, PartitionStatus
from app.schemas.common import PageLimit, problem_responses
from app.schemas.deletions import (
    DeletionCreate,
    DeletionPage,
    DeletionRead,
    DeletionSummary,
    TopicName,
)
from app.schemas.inspection import DeletionPreview
from app.services.deletions.cancel import cancel_deletion as cancel
from app.services.deletions.preview import preview_deletion
from app.services.deletions.submission import submit_deletion
from app.services.deletions.visibility import first_partitions, read_deletion, visible_deletions

router = APIRouter(prefix="/v1/deletions", tags=["deletions"], route_class=StrictJsonRoute)

DeletionId = Annotated[str, Path(max_length=64, description="The deletion's id")]
REPLAY_HEADER = "Idempotent-Replayed"
IDEMPOTENCY_KEY_PATTERN = r"^[\x21-\x7e]{1,255}$"
KEY_HELP = "1-255 visible ASCII characters, unique per request of the caller (e.g. a UUID)"


@router.post(
    "",
    status_code=202,
    response_model=DeletionRead,
    responses={
        **problem_responses(400, 401, 403, 404, 409, 413, 415, 422, 503),
        200: {
            "model": DeletionPreview,
            "description": "With `dry_run: true`: the preview; nothing sent",
            "content": {"application/json": {"example": PREVIEW_EXAMPLE}},
        },
        202: {
            "description": "Accepted: offsets resolved and stored; the executor deletes (see Location)",
            "content": {"application/json": {"example": ACCEPTED_EXAMPLE}},
        },
    },
    description=(
        "Accept a deletion request; offset specs (offset, before, committed_by, to) are resolved to "
        "concrete offsets now. Records some consumer group has not read are refused (409) unless "
        "`allow_unconsumed` or `ignore_groups` say otherwise; `dry_run: true` answers 200 with a preview. "
        "A cluster, topic or partition the service does not have is a 404 naming it; an offset above "
        "its partition's high watermark is a 409 carrying the high watermark. "
        "With an `Idempotency-Key` (scoped to the caller), repeating the same request answers 202 with "
        "the deletion first created and `Idempotent-Replayed: true`; the same key with a different "
        "request is a 422."
    ),
)
async def create_deletion(
    body: Annotated[DeletionCreate, Body(openapi_examples=DELETION_EXAMPLES)],
    response: Response,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
    idempotency_key: Annotated[
        str | None, Header(alias="Idempotency-Key", pattern=IDEMPOTENCY_KEY_PATTERN, description=KEY_HELP)
    ] = None,
) -> DeletionRead | Response:
    """Accept a deletion request; -1 offsets are resolved to the current high watermark now."""
    if body.dry_run:
        preview = await preview_deletion(runtime, body, principal=principal, request_id=request_id)
        return Response(preview.body, status_code=200, media_type="application/json")
    submission = await submit_deletion(
        runtime, body, principal=principal, request_id=request_id, idempotency_key=idempotency_key
    )
    response.headers["Location"] = f"/v1/deletions/{submission.deletion.id}"
    limit, deletion = runtime.settings.limits.max_page_size, submission.deletion
    # Beyond one page the next page's cursor is compared in the database, which orders topic names by its
    # collation: a page built here has the same order only when every partition is of one topic.
    if not submission.replayed and (len(submission.planned) <= limit or len(deletion.topics) == 1):
        return accepted_deletion_read(deletion, submission.planned, limit)
    if submission.replayed:
        response.headers[REPLAY_HEADER] = "true"
    stored = reads.record_of(deletion)
    return deletion_read(stored, await first_partitions(runtime, stored, limit), limit)


@router.get("", response_model=DeletionPage, responses=problem_responses(401, 422))
async def list_deletions(
    principal: PrincipalDep,
    runtime: RuntimeDep,
    status: Annotated[DeletionStatus | None, Query(description="Only deletions in this status")] = None,
    topic: Annotated[TopicName | None, Query(description="Only deletions touching this topic")] = None,
    cluster: Annotated[
        str | None, Query(max_length=255, description="Only deletions on this cluster")
    ] = None,
    cursor: Annotated[
        str | None, Query(min_length=1, max_length=512, description="The next_cursor of the previous page")
    ] = None,
    limit: PageLimit = None,
) -> DeletionPage:
    """List deletions, newest first, with an opaque cursor."""
    size = page_limit(runtime, limit)
    before = None
    if cursor is not None:
        created_at, deletion_id = decode_cursor(cursor, str, str)
        before = (cursor_time(created_at), deletion_id)
    filters = reads.DeletionFilters(status=status, topic=topic, cluster=cluster)
    rows, more = await visible_deletions(runtime, principal, filters, before, size)
    # Built from the last item shown: a cursor never names a deletion the caller may not see.
    next_cursor = encode_cursor(rows[-1].created_at.isoformat(), rows[-1].id) if more else None
    return DeletionPage(items=[deletion_summary(row) for row in rows], next_cursor=next_cursor)


@router.get("/{deletion_id}", response_model=DeletionRead, responses=problem_responses(401, 404, 422))
async def get_deletion(deletion_id: DeletionId, principal: PrincipalDep, runtime: RuntimeDep) -> DeletionRead:
    """Read a deletion: request fields, overall status, counts per status and its first partitions."""
    limit = runtime.settings.limits.max_page_size
    deletion, first = await read_deletion(runtime, principal, deletion_id, limit)
    return deletion_read(deletion, first, limit)


@router.post(
    "/{deletion_id}/cancel",
    response_model=DeletionRead,
    responses=problem_responses(401, 403, 404, 409, 422),
)
async def cancel_deletion(
    deletion_id: DeletionId,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> DeletionRead:
    """Cancel the partitions not yet sent to Kafka (pending and not claimed by a worker)."""
    limit = runtime.settings.limits.max_page_size
    changed, first = await cancel(runtime, principal, deletion_id, request_id=request_id, limit=limit)
    return deletion_read(changed, first, limit)


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
