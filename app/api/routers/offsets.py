"""Offsets of a topic with its consumer groups' lag, and the erasure evidence of a deletion
(``app.services.inspection``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from app.api.examples import CLUSTER_EXAMPLES, TOPIC_EXAMPLES
from app.api.response_examples import TOPIC_OFFSETS_EXAMPLE
from app.api.routing import DatabaseRoute, RequestIdDep, RuntimeDep
from app.auth import PrincipalDep
from app.schemas.common import problem_responses
from app.schemas.deletions import TopicName
from app.schemas.inspection import DeletionEvidence, TopicOffsetsRead
from app.services import inspection

router = APIRouter(tags=["offsets"], route_class=DatabaseRoute)


@router.get(
    "/v1/clusters/{cluster}/topics/{topic}",
    response_model=TopicOffsetsRead,
    responses={
        **problem_responses(401, 403, 404, 422, 503),
        200: {"content": {"application/json": {"example": TOPIC_OFFSETS_EXAMPLE}}},
    },
)
async def topic_offsets(
    cluster: Annotated[
        str,
        Path(max_length=255, description="A configured cluster's name", openapi_examples=CLUSTER_EXAMPLES),
    ],
    topic: Annotated[TopicName, Path(description="The topic", openapi_examples=TOPIC_EXAMPLES)],
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> TopicOffsetsRead:
    """Per partition leader, replicas, log start offset, high watermark, and each group's offset and lag."""
    return await inspection.topic_offsets(runtime, principal, cluster, topic, request_id=request_id)


@router.get(
    "/v1/deletions/{deletion_id}/evidence",
    response_model=DeletionEvidence,
    responses=problem_responses(401, 404, 422),
)
async def deletion_evidence(
    deletion_id: Annotated[str, Path(max_length=64, description="The deletion's id")],
    principal: PrincipalDep,
    runtime: RuntimeDep,
) -> DeletionEvidence:
    """Whether each partition's records are gone now (the leader's log start offset), with audit anchors."""
    return await inspection.deletion_evidence(runtime, principal, deletion_id)
