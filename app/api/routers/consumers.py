"""/v1/clusters/{cluster}/consumers: register consumers, read them, and take Spark progress reports.

Consumers are Kafka consumer groups for authorization (KIP-11, as Kafka's OffsetCommit): registering
consumer ``X`` or reporting its progress needs READ on GROUP ``X`` (a report also READ on every topic in
it); seeing it needs DESCRIBE on GROUP ``X``. A consumer the caller may not describe is a 404.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Path
from sqlalchemy.exc import IntegrityError

from app.adapters.db.repositories import consumers as repo
from app.adapters.db.retention_models import Consumer
from app.adapters.db.session import write_transaction
from app.api.deps import RequestIdDep, RuntimeDep, SessionDep
from app.api.strict_json import StrictJsonRoute
from app.audit import append_event
from app.auth import Principal, PrincipalDep
from app.domain.acl import Operation
from app.domain.ports import TopicPartition
from app.errors import Conflict, NotFound
from app.schemas.common import problem_responses
from app.schemas.retention import (
    ConsumerCreate,
    ConsumerPage,
    ConsumerRead,
    ProgressRead,
    ProgressReport,
    ProgressResult,
)
from app.services.retention.consumers import admitted_checkpoint, authorize_consumer, known_cluster

router = APIRouter(prefix="/v1/clusters/{cluster}/consumers", tags=["consumers"], route_class=StrictJsonRoute)

ClusterPath = Annotated[str, Path(min_length=1, max_length=255, description="A configured cluster's name")]
ConsumerPath = Annotated[
    str, Path(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9._-]+$", description="The consumer's name")
]


def consumer_read(consumer: Consumer, progress: list[ProgressRead] | None = None) -> ConsumerRead:
    return ConsumerRead.model_validate(
        {
            **{k: getattr(consumer, k) for k in ConsumerRead.model_fields if k != "progress"},
            "progress": progress or [],
        }
    )


def _new_consumer(cluster: str, body: ConsumerCreate, principal: Principal, now: datetime) -> Consumer:
    return Consumer(
        id=str(uuid.uuid4()),
        cluster=cluster,
        name=body.name,
        kind=body.kind,
        checkpoint_location=body.checkpoint_location,
        owner=principal.name,
        created_at=now,
        updated_at=now,
    )


@router.post(
    "", status_code=201, response_model=ConsumerRead, responses=problem_responses(401, 403, 404, 409, 422)
)
async def register_consumer(
    cluster: ClusterPath,
    body: ConsumerCreate,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> ConsumerRead:
    """Register a consumer: a Spark query (pushing progress, or with a checkpoint location under the
    configured roots that the service reads) or a Kafka consumer group; needs READ on GROUP name."""
    known_cluster(runtime, cluster)
    await runtime.authorization.check_groups(
        principal, cluster, Operation.READ, [body.name], request_id=request_id
    )
    admitted_checkpoint(runtime, body.checkpoint_location)
    now = datetime.now(UTC)
    consumer = _new_consumer(cluster, body, principal, now)
    try:
        async with write_transaction(runtime.sessionmaker) as session:
            if await repo.get_consumer(session, cluster, body.name) is not None:
                raise Conflict(f"Consumer {body.name!r} is already registered on {cluster!r}.")
            session.add(consumer)
            await session.flush()
            await append_event(
                session,
                action="consumer.registered",
                principal=principal.name,
                client_host=principal.client_host,
                request_id=request_id,
                cluster=cluster,
                deletion_id=None,
                details={
                    "consumer": body.name,
                    "kind": body.kind,
                    "checkpoint_location": body.checkpoint_location,
                },
                occurred_at=now,
            )
    except IntegrityError:
        raise Conflict(f"Consumer {body.name!r} is already registered on {cluster!r}.") from None
    return consumer_read(consumer)


@router.get("", response_model=ConsumerPage, responses=problem_responses(401, 404, 422))
async def list_consumers(
    cluster: ClusterPath, principal: PrincipalDep, runtime: RuntimeDep, session: SessionDep
) -> ConsumerPage:
    """List the consumers registered on a cluster that the caller may DESCRIBE (as groups)."""
    known_cluster(runtime, cluster)
    consumers = await repo.list_consumers(session, cluster)
    visible = await runtime.authorization.describable_groups(principal, cluster, [c.name for c in consumers])
    return ConsumerPage(items=[consumer_read(c) for c in consumers if c.name in visible])


@router.get("/{name}", response_model=ConsumerRead, responses=problem_responses(401, 404, 422))
async def get_consumer(
    cluster: ClusterPath,
    name: ConsumerPath,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    session: SessionDep,
) -> ConsumerRead:
    """Read a consumer with its reported position on every partition; needs DESCRIBE on GROUP name."""
    known_cluster(runtime, cluster)
    visible = await runtime.authorization.describable_groups(principal, cluster, [name])
    consumer = await repo.get_consumer(session, cluster, name) if visible else None
    if consumer is None:
        raise NotFound(f"No consumer {name!r} on {cluster!r}.")
    rows = await repo.progress_rows(session, [consumer.id])
    return consumer_read(consumer, [ProgressRead.model_validate(r, from_attributes=True) for r in rows])


def _update(body: ProgressReport) -> repo.ProgressUpdate:
    offsets = {
        TopicPartition(topic, int(partition)): offset
        for topic, partitions in body.offsets.items()
        for partition, offset in partitions.items()
    }
    return repo.ProgressUpdate(body.query_id, body.run_id, body.batch_id, offsets)


@router.put(
    "/{name}/progress", response_model=ProgressResult, responses=problem_responses(401, 403, 404, 409, 422)
)
async def report_progress(
    cluster: ClusterPath,
    name: ConsumerPath,
    body: ProgressReport,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> ProgressResult:
    """Record a Spark query's committed batch (end offsets per partition). Idempotent on (query_id, batch_id);
    an older or repeated batch never moves a position back. An unknown consumer is registered as Spark.
    Needs READ on GROUP name and on every topic reported."""
    known_cluster(runtime, cluster)
    await authorize_consumer(runtime, principal, cluster, name, request_id)
    await runtime.authorization.check_read_topics(
        principal, cluster, sorted(body.offsets), request_id=request_id
    )
    now = datetime.now(UTC)
    async with write_transaction(runtime.sessionmaker) as session:
        consumer = await repo.get_consumer(session, cluster, name, lock=True)
        if consumer is None:
            consumer = _new_consumer(cluster, ConsumerCreate(name=name, kind="spark"), principal, now)
            session.add(consumer)
            await session.flush()
        if consumer.kind != "spark":
            raise Conflict(f"Consumer {name!r} is a Kafka group; only Spark consumers report progress.")
        outcome = await repo.record_progress(session, consumer, _update(body), now)
        if outcome.query_changed or consumer.created_at == now:
            # Audited when a query first reports or a new query takes over (positions may go back then);
            # routine batches are not, or the trail would grow with every micro-batch.
            await append_event(
                session,
                action="consumer.query_changed" if outcome.query_changed else "consumer.registered",
                principal=principal.name,
                client_host=principal.client_host,
                request_id=request_id,
                cluster=cluster,
                deletion_id=None,
                details={
                    "consumer": name,
                    "query_id": body.query_id,
                    "run_id": body.run_id,
                    "batch_id": body.batch_id,
                },
                occurred_at=now,
            )
    return ProgressResult(consumer=name, applied=outcome.applied, ignored=outcome.ignored)
