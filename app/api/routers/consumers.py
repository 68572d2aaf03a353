"""/v1/clusters/{cluster}/consumers: register consumers, read them, and take Spark progress reports
(``app.services.retention.consumers``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path

from app.adapters.db.retention_models import Consumer
from app.api.examples import CONSUMER_EXAMPLES, PROGRESS_EXAMPLES, SPARK_CONSUMER
from app.api.paths import ClusterPath
from app.api.response_examples import CONSUMER_CREATED_EXAMPLE
from app.api.routing import RequestIdDep, RuntimeDep, StrictJsonRoute
from app.auth import PrincipalDep
from app.schemas.common import problem_responses
from app.schemas.consumers import (
    ConsumerCreate,
    ConsumerPage,
    ConsumerRead,
    ProgressRead,
    ProgressReport,
    ProgressResult,
)
from app.services.retention import consumers as retention

router = APIRouter(prefix="/v1/clusters/{cluster}/consumers", tags=["consumers"], route_class=StrictJsonRoute)

ConsumerPath = Annotated[
    str,
    Path(
        min_length=1,
        max_length=255,
        pattern=r"^[A-Za-z0-9._-]+$",
        description="The consumer's name",
        openapi_examples={
            "spark": {"summary": "The Spark consumer of the examples", "value": SPARK_CONSUMER}
        },
    ),
]


def consumer_read(consumer: Consumer, progress: list[ProgressRead] | None = None) -> ConsumerRead:
    return ConsumerRead.model_validate(
        {
            **{k: getattr(consumer, k) for k in ConsumerRead.model_fields if k != "progress"},
            "progress": progress or [],
        }
    )


@router.post(
    "",
    status_code=201,
    response_model=ConsumerRead,
    responses={
        **problem_responses(401, 403, 404, 409, 422),
        201: {"content": {"application/json": {"example": CONSUMER_CREATED_EXAMPLE}}},
    },
)
async def register_consumer(
    cluster: ClusterPath,
    body: Annotated[ConsumerCreate, Body(openapi_examples=CONSUMER_EXAMPLES)],
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> ConsumerRead:
    """Register a consumer: a Spark query (pushing progress, or with a checkpoint location under the
    configured roots that the service reads) or a Kafka consumer group; needs READ on GROUP name."""
    consumer = await retention.register_consumer(runtime, principal, cluster, body, request_id=request_id)
    return consumer_read(consumer)


@router.get("", response_model=ConsumerPage, responses=problem_responses(401, 404, 422))
async def list_consumers(cluster: ClusterPath, principal: PrincipalDep, runtime: RuntimeDep) -> ConsumerPage:
    """List the consumers registered on a cluster that the caller may DESCRIBE (as groups)."""
    return ConsumerPage(
        items=[consumer_read(c) for c in await retention.list_consumers(runtime, principal, cluster)]
    )


@router.get("/{name}", response_model=ConsumerRead, responses=problem_responses(401, 404, 422))
async def get_consumer(
    cluster: ClusterPath,
    name: ConsumerPath,
    principal: PrincipalDep,
    runtime: RuntimeDep,
) -> ConsumerRead:
    """Read a consumer with its reported position on every partition; needs DESCRIBE on GROUP name."""
    consumer, rows = await retention.get_consumer(runtime, principal, cluster, name)
    return consumer_read(consumer, [ProgressRead.model_validate(r, from_attributes=True) for r in rows])


@router.put(
    "/{name}/progress", response_model=ProgressResult, responses=problem_responses(401, 403, 404, 409, 422)
)
async def report_progress(
    cluster: ClusterPath,
    name: ConsumerPath,
    body: Annotated[ProgressReport, Body(openapi_examples=PROGRESS_EXAMPLES)],
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> ProgressResult:
    """Record a Spark query's committed batch (end offsets per partition). Idempotent on (query_id, batch_id);
    an older or repeated batch never moves a position back. An unknown consumer is registered as Spark.
    Needs READ on GROUP name and on every topic reported."""
    outcome = await retention.report_progress(runtime, principal, cluster, name, body, request_id=request_id)
    return ProgressResult(consumer=name, applied=outcome.applied, ignored=outcome.ignored)
