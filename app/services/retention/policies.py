"""Consumed-data retention policies: create, read, change, delete, and the record of their sweeps.

Who may do what is ``app.services.retention.policy_access``; every change is audited in its transaction
with the policy as it stands after the change. A policy's sweeps run as its owner, who never changes.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.repositories import policies as repo
from app.adapters.db.retention_models import PolicyRun, RetentionPolicy
from app.adapters.db.session import read_session, write_transaction
from app.audit import NewEvent, append_event, events
from app.audit.events import Actor
from app.auth import Principal
from app.errors import Conflict, ConnectClusterNotFound, FieldError, NotFound
from app.schemas.retention import (
    CONNECTORS_FOR_TOPICS,
    ConsumerChoice,
    Consumers,
    PolicyCreate,
    PolicyRead,
    PolicyUpdate,
)
from app.services.approvals import policies as approval
from app.services.approvals import transitions
from app.services.retention.consumers import known_cluster
from app.services.retention.policy_access import (
    authorize_coverage,
    authorize_management,
    require_visible,
    visible_policies,
)
from app.services.runtime import Runtime


def policy_read(policy: RetentionPolicy) -> PolicyRead:
    fields = {k: getattr(policy, k) for k in PolicyRead.model_fields if k != "consumers"}
    consumers: Any = "all_groups" if policy.consumers == {"all_groups": True} else policy.consumers
    return PolicyRead.model_validate({**fields, "consumers": consumers})


def _consumers_json(consumers: Consumers) -> dict[str, Any]:
    if not isinstance(consumers, ConsumerChoice):
        return {"all_groups": True}
    stored: dict[str, Any] = {"groups": list(consumers.groups), "spark": list(consumers.spark)}
    if consumers.all_groups:
        stored = {"all_groups": True, "spark": list(consumers.spark)}
    if consumers.connect is not None:
        stored["connect"] = consumers.connect.model_dump()
    return stored


def _safety_option(given: bool | None, consumers: Mapping[str, Any]) -> bool:
    """KIP-762's rules are on by default for a policy with Connect sinks."""
    return given if given is not None else consumers.get("connect") is not None


def check_connect(
    runtime: Runtime, cluster: str, topics: Mapping[str, Any], consumers: Mapping[str, Any]
) -> None:
    """404 unless the policy's Connect cluster is configured for this Kafka cluster; 409 when topics read
    by connectors come without Connect sinks (only an update can: it keeps the stored topics or
    consumers it does not give, and the request models refuse the rest)."""
    connect = consumers.get("connect")
    if topics.get("read_by_connectors") and connect is None:
        detail = f"{CONNECTORS_FOR_TOPICS}: the policy's consumers have none; give consumers with connect"
        raise Conflict(detail, errors=[FieldError("#/topics/read_by_connectors", detail)])
    if connect is None:
        return
    configured = runtime.settings.connect.get(connect["cluster"])
    if configured is None or configured.kafka_cluster != cluster:
        detail = f"no Kafka Connect cluster {connect['cluster']!r} reads from {cluster!r} (PURGE_CONNECT)"
        raise ConnectClusterNotFound(detail, errors=[FieldError("#/consumers/connect/cluster", detail)])


def _read(policy: RetentionPolicy) -> Mapping[str, Any]:
    return policy_read(policy).model_dump(mode="json", exclude={"cluster", "name"})


def _new_policy(cluster: str, body: PolicyCreate, principal: Principal, now: datetime) -> RetentionPolicy:
    consumers = _consumers_json(body.consumers)
    return RetentionPolicy(
        id=str(uuid.uuid4()),
        cluster=cluster,
        name=body.name,
        topics=body.topics.model_dump(exclude_none=True),
        consumers=consumers,
        skip_foreign_active_groups=_safety_option(body.skip_foreign_active_groups, consumers),
        await_previous_deletion=_safety_option(body.await_previous_deletion, consumers),
        min_age_seconds=body.min_age_seconds,
        min_records=body.min_records,
        interval_seconds=body.interval_seconds,
        leader_only=body.leader_only,
        enabled=body.enabled,
        owner=principal.name,
        owner_groups=list(principal.groups),
        owner_host=principal.client_host[:64],
        created_at=now,
        updated_at=now,
        last_run_at=None,
        next_run_at=now,
    )


async def create_policy(
    runtime: Runtime, principal: Principal, cluster: str, body: PolicyCreate, *, request_id: str
) -> RetentionPolicy:
    """Create a policy; needs DELETE on the topics it covers and DESCRIBE on its consumers."""
    known_cluster(runtime, cluster)
    policy = _new_policy(cluster, body, principal, datetime.now(UTC))
    check_connect(runtime, cluster, policy.topics, policy.consumers)
    await authorize_coverage(runtime, principal, cluster, policy.topics, policy.consumers, request_id)
    covered = await approval.covered_topics(runtime, cluster, policy.topics)
    taken = Conflict(f"Policy {body.name!r} already exists on {cluster!r}.")
    try:
        async with write_transaction(runtime.sessionmaker) as session:
            if await repo.get_policy(session, cluster, body.name) is not None:
                raise taken
            session.add(policy)
            await session.flush()
            actor = Actor.of(principal, request_id)
            await append_event(session, events.policy_created(actor, cluster, policy.name, _read(policy)))
            await approval.hold_if_protected(session, policy, covered, actor)
    except IntegrityError:
        raise taken from None
    return policy


async def list_policies(runtime: Runtime, principal: Principal, cluster: str) -> list[RetentionPolicy]:
    """The policies of ``cluster`` the caller owns, or all of them with DESCRIBE on CLUSTER."""
    known_cluster(runtime, cluster)
    async with read_session(runtime.sessionmaker) as session:
        policies = await repo.list_policies(session, cluster)
    return await visible_policies(runtime, principal, cluster, policies)


async def get_policy(runtime: Runtime, principal: Principal, cluster: str, name: str) -> RetentionPolicy:
    """The policy, or 404 when there is none or the caller may not see it."""
    known_cluster(runtime, cluster)
    async with read_session(runtime.sessionmaker) as session:
        policy = await repo.get_policy(session, cluster, name)
    return await require_visible(runtime, principal, policy, name, cluster)


async def _stored(session: AsyncSession, cluster: str, name: str) -> RetentionPolicy:
    """The policy inside a write transaction, after the caller was authorized for it (gone since: 404)."""
    policy = await repo.get_policy(session, cluster, name)
    if policy is None:
        raise NotFound(f"No policy {name!r} on {cluster!r}.")
    return policy


def _apply_update(policy: RetentionPolicy, body: PolicyUpdate, now: datetime) -> None:
    changes = body.model_dump(exclude_unset=True)
    if body.topics is not None:
        policy.topics = body.topics.model_dump(exclude_none=True)
    if body.consumers is not None:
        policy.consumers = _consumers_json(body.consumers)
    fields = ("min_age_seconds", "min_records", "interval_seconds", "leader_only", "enabled")
    for field in (*fields, "skip_foreign_active_groups", "await_previous_deletion"):
        if changes.get(field) is not None:
            setattr(policy, field, changes[field])
    # The owner stays: sweeps keep the owner's rights (re-checked at every sweep), whoever changed it.
    policy.updated_at = policy.next_run_at = now


async def update_policy(
    runtime: Runtime, principal: Principal, cluster: str, name: str, body: PolicyUpdate, *, request_id: str
) -> RetentionPolicy:
    """Change a policy: its owner or ALTER on CLUSTER, and a change of its topics or consumers also the
    create checks on what the changed policy covers."""
    current = await get_policy(runtime, principal, cluster, name)
    await authorize_management(runtime, principal, current, request_id)
    if body.topics is not None or body.consumers is not None:
        # Schedule and thresholds are management alone; what it covers is asked as for a new policy.
        topics = body.topics.model_dump(exclude_none=True) if body.topics is not None else current.topics
        consumers = _consumers_json(body.consumers) if body.consumers is not None else current.consumers
        check_connect(runtime, cluster, topics, consumers)
        await authorize_coverage(runtime, principal, cluster, topics, consumers, request_id)
    covered = None
    if body.topics is not None or current.approval_status is not None:  # widened, or asks again
        topics = body.topics.model_dump(exclude_none=True) if body.topics is not None else current.topics
        covered = await approval.covered_topics(runtime, cluster, topics)
    async with write_transaction(runtime.sessionmaker) as session:
        policy = await _stored(session, cluster, name)
        _apply_update(policy, body, datetime.now(UTC))
        await session.flush()
        await append_event(session, _changed(events.policy_updated, principal, request_id, policy))
        if covered is not None:
            actor = Actor.of(principal, request_id)
            await approval.hold_if_protected(session, policy, covered, actor)
    return policy


async def delete_policy(
    runtime: Runtime, principal: Principal, cluster: str, name: str, *, request_id: str
) -> None:
    """Delete a policy and its run history (the audit trail keeps what it did); its owner or ALTER on
    CLUSTER."""
    current = await get_policy(runtime, principal, cluster, name)
    await authorize_management(runtime, principal, current, request_id)
    async with write_transaction(runtime.sessionmaker) as session:
        policy = await _stored(session, cluster, name)
        await append_event(session, _changed(events.policy_deleted, principal, request_id, policy))
        await transitions.cancel_policy_request(session, policy.id, datetime.now(UTC))
        await session.delete(policy)


def _changed(
    build: Callable[[Actor, str, str, Mapping[str, Any]], NewEvent],
    principal: Principal,
    request_id: str,
    policy: RetentionPolicy,
) -> NewEvent:
    return build(Actor.of(principal, request_id), policy.cluster, policy.name, _read(policy))


async def list_runs(
    runtime: Runtime, principal: Principal, cluster: str, name: str, *, before: int | None, limit: int
) -> Sequence[PolicyRun]:
    """The policy's sweeps, newest first (older than ``before``); visible to whoever may see the policy."""
    policy = await get_policy(runtime, principal, cluster, name)
    async with read_session(runtime.sessionmaker) as session:
        return await repo.list_runs(session, policy.id, before_id=before, limit=limit)
