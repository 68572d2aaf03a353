"""/v1/clusters/{cluster}/policies: consumed-data retention policies and the record of their sweeps."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response
from sqlalchemy.exc import IntegrityError

from app.adapters.db.repositories import policies as repo
from app.adapters.db.retention_models import RetentionPolicy
from app.adapters.db.session import write_transaction
from app.api.deps import RequestIdDep, RuntimeDep, SessionDep
from app.api.pagination import BIG_ID, decode_cursor, encode_cursor
from app.api.routers.consumers import ClusterPath
from app.api.strict_json import StrictJsonRoute
from app.api.views import page_limit
from app.audit import append_event
from app.auth import Principal, PrincipalDep
from app.errors import Conflict, NotFound
from app.runtime import Runtime
from app.schemas.common import problem_responses
from app.schemas.retention import (
    ConsumerChoice,
    Consumers,
    PolicyCreate,
    PolicyPage,
    PolicyRead,
    PolicyRunPage,
    PolicyRunRead,
    PolicyUpdate,
)
from app.services.retention.consumers import known_cluster
from app.services.retention.policies import (
    authorize_coverage,
    authorize_management,
    require_visible,
    visible_policies,
)

router = APIRouter(prefix="/v1/clusters/{cluster}/policies", tags=["policies"], route_class=StrictJsonRoute)

PolicyPath = Annotated[str, Path(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9._-]+$")]


def _consumers_json(consumers: Consumers) -> dict[str, Any]:
    if isinstance(consumers, ConsumerChoice):
        return {"groups": list(consumers.groups), "spark": list(consumers.spark)}
    return {"all_groups": True}


def policy_read(policy: RetentionPolicy) -> PolicyRead:
    fields = {k: getattr(policy, k) for k in PolicyRead.model_fields if k != "consumers"}
    consumers: Any = "all_groups" if policy.consumers.get("all_groups") else policy.consumers
    return PolicyRead.model_validate({**fields, "consumers": consumers})


async def _audit(
    session: Any, action: str, principal: Principal, request_id: str, policy: RetentionPolicy
) -> None:
    await append_event(
        session,
        action=action,
        principal=principal.name,
        client_host=principal.client_host,
        request_id=request_id,
        cluster=policy.cluster,
        deletion_id=None,
        details={
            "policy": policy.name,
            **policy_read(policy).model_dump(mode="json", exclude={"cluster", "name"}),
        },
    )


def _wake(request: Request) -> None:
    scheduler = getattr(request.app.state, "scheduler", None)
    if scheduler is not None:
        scheduler.wake()


def _new_policy(cluster: str, body: PolicyCreate, principal: Principal, now: datetime) -> RetentionPolicy:
    return RetentionPolicy(
        id=str(uuid.uuid4()),
        cluster=cluster,
        name=body.name,
        topics=body.topics.model_dump(exclude_none=True),
        consumers=_consumers_json(body.consumers),
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


@router.post(
    "", status_code=201, response_model=PolicyRead, responses=problem_responses(401, 403, 404, 409, 422, 503)
)
async def create_policy(
    cluster: ClusterPath,
    body: PolicyCreate,
    request: Request,
    response: Response,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> PolicyRead:
    """Create a retention policy; needs DELETE on the topics it covers and DESCRIBE on its consumers.
    Its sweeps run as the caller, its owner."""
    known_cluster(runtime, cluster)
    policy = _new_policy(cluster, body, principal, datetime.now(UTC))
    await authorize_coverage(runtime, principal, cluster, policy.topics, policy.consumers, request_id)
    try:
        async with write_transaction(runtime.sessionmaker) as session:
            if await repo.get_policy(session, cluster, body.name) is not None:
                raise Conflict(f"Policy {body.name!r} already exists on {cluster!r}.")
            session.add(policy)
            await session.flush()
            await _audit(session, "policy.created", principal, request_id, policy)
    except IntegrityError:
        raise Conflict(f"Policy {body.name!r} already exists on {cluster!r}.") from None
    response.headers["Location"] = f"/v1/clusters/{cluster}/policies/{policy.name}"
    _wake(request)
    return policy_read(policy)


@router.get("", response_model=PolicyPage, responses=problem_responses(401, 404, 422))
async def list_policies(
    cluster: ClusterPath, principal: PrincipalDep, runtime: RuntimeDep, session: SessionDep
) -> PolicyPage:
    """List the retention policies of a cluster that the caller owns, or all with DESCRIBE on CLUSTER."""
    known_cluster(runtime, cluster)
    policies = await visible_policies(runtime, principal, cluster, await repo.list_policies(session, cluster))
    return PolicyPage(items=[policy_read(p) for p in policies])


async def _policy(
    session: Any, runtime: Runtime, principal: Principal, cluster: str, name: str
) -> RetentionPolicy:
    """The policy, or 404 when there is none or the caller may not see it."""
    return await require_visible(
        runtime, principal, await repo.get_policy(session, cluster, name), name, cluster
    )


async def _stored(session: Any, cluster: str, name: str) -> RetentionPolicy:
    """The policy inside a write transaction, after the caller was authorized for it (gone since: 404)."""
    policy = await repo.get_policy(session, cluster, name)
    if policy is None:
        raise NotFound(f"No policy {name!r} on {cluster!r}.")
    return policy


@router.get("/{name}", response_model=PolicyRead, responses=problem_responses(401, 404, 422))
async def get_policy(
    cluster: ClusterPath,
    name: PolicyPath,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    session: SessionDep,
) -> PolicyRead:
    """Read a retention policy; its owner, or a caller with DESCRIBE on CLUSTER, may."""
    known_cluster(runtime, cluster)
    return policy_read(await _policy(session, runtime, principal, cluster, name))


def _apply_update(policy: RetentionPolicy, body: PolicyUpdate, now: datetime) -> None:
    changes = body.model_dump(exclude_unset=True)
    if body.topics is not None:
        policy.topics = body.topics.model_dump(exclude_none=True)
    if body.consumers is not None:
        policy.consumers = _consumers_json(body.consumers)
    for field in ("min_age_seconds", "min_records", "interval_seconds", "leader_only", "enabled"):
        if changes.get(field) is not None:
            setattr(policy, field, changes[field])
    # The owner stays: sweeps keep the owner's rights (re-checked at every sweep), whoever changed it.
    policy.updated_at = policy.next_run_at = now


@router.patch("/{name}", response_model=PolicyRead, responses=problem_responses(401, 403, 404, 422, 503))
async def update_policy(
    cluster: ClusterPath,
    name: PolicyPath,
    body: PolicyUpdate,
    request: Request,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
    session: SessionDep,
) -> PolicyRead:
    """Change a retention policy; needs being its owner or ALTER on CLUSTER, and a change of its topics or
    consumers also DELETE on the topics and DESCRIBE on the consumers it covers after the change. The
    owner does not change."""
    known_cluster(runtime, cluster)
    current = await _policy(session, runtime, principal, cluster, name)
    await authorize_management(runtime, principal, current, request_id)
    if body.topics is not None or body.consumers is not None:
        # Schedule and thresholds are management alone; what it covers is asked as for a new policy.
        topics = body.topics.model_dump(exclude_none=True) if body.topics is not None else current.topics
        consumers = _consumers_json(body.consumers) if body.consumers is not None else current.consumers
        await authorize_coverage(runtime, principal, cluster, topics, consumers, request_id)
    async with write_transaction(runtime.sessionmaker) as tx:
        policy = await _stored(tx, cluster, name)
        _apply_update(policy, body, datetime.now(UTC))
        await tx.flush()
        await _audit(tx, "policy.updated", principal, request_id, policy)
    _wake(request)
    return policy_read(policy)


@router.delete("/{name}", status_code=204, responses=problem_responses(401, 403, 404, 422, 503))
async def delete_policy(
    cluster: ClusterPath,
    name: PolicyPath,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
    session: SessionDep,
) -> Response:
    """Delete a retention policy and its run history (the audit trail keeps what it did); needs being its
    owner or ALTER on CLUSTER."""
    known_cluster(runtime, cluster)
    current = await _policy(session, runtime, principal, cluster, name)
    await authorize_management(runtime, principal, current, request_id)
    async with write_transaction(runtime.sessionmaker) as tx:
        policy = await _stored(tx, cluster, name)
        await _audit(tx, "policy.deleted", principal, request_id, policy)
        await tx.delete(policy)
    return Response(status_code=204)


@router.get("/{name}/runs", response_model=PolicyRunPage, responses=problem_responses(401, 404, 422))
async def list_policy_runs(
    cluster: ClusterPath,
    name: PolicyPath,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    session: SessionDep,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
    limit: Annotated[int | None, Query(ge=1)] = None,
) -> PolicyRunPage:
    """The policy's sweeps, newest first: what was planned, what was skipped and why, the deletion made.
    Visible to whoever may see the policy."""
    known_cluster(runtime, cluster)
    policy = await _policy(session, runtime, principal, cluster, name)
    size = page_limit(runtime, limit)
    before = decode_cursor(cursor, BIG_ID)[0] if cursor is not None else None
    rows = await repo.list_runs(session, policy.id, before_id=before, limit=size)
    items = [PolicyRunRead.model_validate(r, from_attributes=True) for r in rows]
    return PolicyRunPage(items=items, next_cursor=encode_cursor(rows[-1].id) if len(rows) == size else None)
