"""Registered consumers (Kafka groups and Spark queries) and the progress Spark queries report.

Consumers are Kafka consumer groups for authorization (KIP-11, as Kafka's OffsetCommit): registering
consumer ``X`` or reporting its progress needs READ on GROUP ``X`` (a report also READ on every topic in
it); seeing it needs DESCRIBE on GROUP ``X``. A consumer the caller may not describe is a 404.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy.exc import IntegrityError

from app.adapters.db.repositories import consumers as repo
from app.adapters.db.retention_models import Consumer, ConsumerProgress
from app.adapters.db.session import read_session, write_transaction
from app.audit import append_event, events
from app.audit.events import Actor
from app.auth import Principal
from app.domain.acl import Operation
from app.domain.ports import TopicPartition
from app.errors import CheckpointNotAllowed, ClusterNotFound, Conflict, FieldError, NotFound
from app.integrations.spark.checkpoint_roots import CheckpointLocationRefused
from app.schemas.consumers import ConsumerCreate, ProgressReport
from app.services.runtime import Runtime


def known_cluster(runtime: Runtime, cluster: str) -> None:
    """404 unless ``cluster`` is configured."""
    if not runtime.gateway.has_cluster(cluster):
        raise ClusterNotFound(f"Unknown cluster {cluster!r}.")


async def authorize_consumer(
    runtime: Runtime, principal: Principal, cluster: str, name: str, request_id: str
) -> None:
    """403 (audited) unless the caller may READ GROUP ``name``, as Kafka answers an OffsetCommit with
    GROUP_AUTHORIZATION_FAILED; the same whether or not the consumer exists, so a refusal reveals nothing."""
    await runtime.authorization.check_groups(
        principal, cluster, Operation.READ, [name], request_id=request_id
    )


def admitted_checkpoint(runtime: Runtime, location: str | None) -> None:
    """403 unless ``location`` lies under ``PURGE_SPARK_CHECKPOINT_ROOTS`` (symlinks followed): the
    operator's configuration refuses it, which the request's document cannot say."""
    if location is None:
        return
    try:
        runtime.settings.spark.roots().admit(location)
    except CheckpointLocationRefused as exc:
        detail = f"checkpoint_location refused: {exc}"
        raise CheckpointNotAllowed(detail, errors=[FieldError("#/checkpoint_location", str(exc))]) from None


def _new_consumer(
    cluster: str, name: str, kind: str, location: str | None, owner: str, now: datetime
) -> Consumer:
    return Consumer(
        id=str(uuid.uuid4()),
        cluster=cluster,
        name=name,
        kind=kind,
        checkpoint_location=location,
        owner=owner,
        created_at=now,
        updated_at=now,
    )


async def register_consumer(
    runtime: Runtime, principal: Principal, cluster: str, body: ConsumerCreate, *, request_id: str
) -> Consumer:
    """Register a consumer (needs READ on GROUP name); 409 when the name is taken."""
    known_cluster(runtime, cluster)
    await authorize_consumer(runtime, principal, cluster, body.name, request_id)
    admitted_checkpoint(runtime, body.checkpoint_location)
    now = datetime.now(UTC)
    consumer = _new_consumer(cluster, body.name, body.kind, body.checkpoint_location, principal.name, now)
    taken = Conflict(f"Consumer {body.name!r} is already registered on {cluster!r}.")
    try:
        async with write_transaction(runtime.sessionmaker) as session:
            if await repo.get_consumer(session, cluster, body.name) is not None:
                raise taken
            session.add(consumer)
            await session.flush()
            registered = events.consumer_registered(
                Actor.of(principal, request_id),
                cluster,
                body.name,
                now,
                kind=body.kind,
                checkpoint_location=body.checkpoint_location,
            )
            await append_event(session, registered)
    except IntegrityError:
        raise taken from None
    return consumer


async def list_consumers(runtime: Runtime, principal: Principal, cluster: str) -> list[Consumer]:
    """The consumers registered on ``cluster`` that the caller may DESCRIBE (as groups)."""
    known_cluster(runtime, cluster)
    async with read_session(runtime.sessionmaker) as session:
        consumers = await repo.list_consumers(session, cluster)
    visible = await runtime.authorization.describable_groups(principal, cluster, [c.name for c in consumers])
    return [c for c in consumers if c.name in visible]


async def get_consumer(
    runtime: Runtime, principal: Principal, cluster: str, name: str
) -> tuple[Consumer, Sequence[ConsumerProgress]]:
    """A consumer with its position on every partition; 404 without DESCRIBE on GROUP name."""
    known_cluster(runtime, cluster)
    visible = await runtime.authorization.describable_groups(principal, cluster, [name])
    async with read_session(runtime.sessionmaker) as session:
        consumer = await repo.get_consumer(session, cluster, name) if visible else None
        if consumer is None:
            raise NotFound(f"No consumer {name!r} on {cluster!r}.")
        return consumer, await repo.progress_rows(session, [consumer.id])


def _update(body: ProgressReport) -> repo.ProgressUpdate:
    offsets = {
        TopicPartition(topic, int(partition)): offset
        for topic, partitions in body.offsets.items()
        for partition, offset in partitions.items()
    }
    return repo.ProgressUpdate(body.query_id, body.run_id, body.batch_id, offsets)


async def report_progress(
    runtime: Runtime, principal: Principal, cluster: str, name: str, body: ProgressReport, *, request_id: str
) -> repo.ProgressOutcome:
    """Record a Spark query's committed batch; an unknown consumer is registered as Spark. Needs READ on
    GROUP name and on every topic reported."""
    known_cluster(runtime, cluster)
    await authorize_consumer(runtime, principal, cluster, name, request_id)
    await runtime.authorization.check_read_topics(
        principal, cluster, sorted(body.offsets), request_id=request_id
    )
    now = datetime.now(UTC)
    async with write_transaction(runtime.sessionmaker) as session:
        consumer = await repo.get_consumer(session, cluster, name, lock=True)
        if consumer is None:
            consumer = _new_consumer(cluster, name, "spark", None, principal.name, now)
            session.add(consumer)
            await session.flush()
        if consumer.kind != "spark":
            raise Conflict(f"Consumer {name!r} is a Kafka group; only Spark consumers report progress.")
        outcome = await repo.record_progress(session, consumer, _update(body), now)
        if outcome.query_changed or consumer.created_at == now:
            # Audited when a query first reports or a new query takes over (positions may go back then);
            # routine batches are not, or the trail would grow with every micro-batch.
            actor = Actor.of(principal, request_id)
            if outcome.query_changed:
                event = events.consumer_query_changed(actor, cluster, name, body, now)
            else:
                event = events.consumer_registered(actor, cluster, name, now, batch=body)
            await append_event(session, event)
    return outcome
