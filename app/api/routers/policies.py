"""/v1/clusters/{cluster}/policies: consumed-data retention policies and the record of their sweeps
(``app.services.retention.policies``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Query, Request, Response

from app.api.examples import POLICY_EXAMPLES, POLICY_NAME, POLICY_UPDATE_EXAMPLES
from app.api.pagination import BIG_ID, decode_cursor, encode_cursor, page_limit
from app.api.paths import ClusterPath
from app.api.response_examples import POLICY_CREATED_EXAMPLE
from app.api.routing import RequestIdDep, RuntimeDep, StrictJsonRoute
from app.auth import PrincipalDep
from app.schemas.common import PageLimit, problem_responses
from app.schemas.retention import (
    PolicyCreate,
    PolicyPage,
    PolicyRead,
    PolicyRunPage,
    PolicyRunRead,
    PolicyUpdate,
)
from app.services.retention import policies
from app.services.retention.policies import policy_read

router = APIRouter(prefix="/v1/clusters/{cluster}/policies", tags=["policies"], route_class=StrictJsonRoute)

PolicyPath = Annotated[
    str,
    Path(
        min_length=1,
        max_length=255,
        pattern=r"^[A-Za-z0-9._-]+$",
        description="The policy's name",
        openapi_examples={"example": {"summary": "The policy of the examples", "value": POLICY_NAME}},
    ),
]


def _wake(request: Request) -> None:
    scheduler = getattr(request.app.state, "scheduler", None)
    if scheduler is not None:
        scheduler.wake()


@router.post(
    "",
    status_code=201,
    response_model=PolicyRead,
    responses={
        **problem_responses(401, 403, 404, 409, 422, 503),
        201: {"content": {"application/json": {"example": POLICY_CREATED_EXAMPLE}}},
    },
)
async def create_policy(
    cluster: ClusterPath,
    body: Annotated[PolicyCreate, Body(openapi_examples=POLICY_EXAMPLES)],
    request: Request,
    response: Response,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> PolicyRead:
    """Create a retention policy; needs DELETE on the topics it covers and DESCRIBE on its consumers.
    Its sweeps run as the caller, its owner."""
    policy = await policies.create_policy(runtime, principal, cluster, body, request_id=request_id)
    response.headers["Location"] = f"/v1/clusters/{cluster}/policies/{policy.name}"
    _wake(request)
    return policy_read(policy)


@router.get("", response_model=PolicyPage, responses=problem_responses(401, 404, 422))
async def list_policies(cluster: ClusterPath, principal: PrincipalDep, runtime: RuntimeDep) -> PolicyPage:
    """List the retention policies of a cluster that the caller owns, or all with DESCRIBE on CLUSTER."""
    return PolicyPage(
        items=[policy_read(p) for p in await policies.list_policies(runtime, principal, cluster)]
    )


@router.get("/{name}", response_model=PolicyRead, responses=problem_responses(401, 404, 422))
async def get_policy(
    cluster: ClusterPath, name: PolicyPath, principal: PrincipalDep, runtime: RuntimeDep
) -> PolicyRead:
    """Read a retention policy; its owner, or a caller with DESCRIBE on CLUSTER, may."""
    return policy_read(await policies.get_policy(runtime, principal, cluster, name))


@router.patch("/{name}", response_model=PolicyRead, responses=problem_responses(401, 403, 404, 409, 422, 503))
async def update_policy(
    cluster: ClusterPath,
    name: PolicyPath,
    body: Annotated[PolicyUpdate, Body(openapi_examples=POLICY_UPDATE_EXAMPLES)],
    request: Request,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> PolicyRead:
    """Change a retention policy; needs being its owner or ALTER on CLUSTER, and a change of its topics or
    consumers also DELETE on the topics and DESCRIBE on the consumers it covers after the change. The
    owner does not change."""
    policy = await policies.update_policy(runtime, principal, cluster, name, body, request_id=request_id)
    _wake(request)
    return policy_read(policy)


@router.delete("/{name}", status_code=204, responses=problem_responses(401, 403, 404, 422, 503))
async def delete_policy(
    cluster: ClusterPath,
    name: PolicyPath,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> Response:
    """Delete a retention policy and its run history (the audit trail keeps what it did); needs being its
    owner or ALTER on CLUSTER."""
    await policies.delete_policy(runtime, principal, cluster, name, request_id=request_id)
    return Response(status_code=204)


@router.get("/{name}/runs", response_model=PolicyRunPage, responses=problem_responses(401, 404, 422))
async def list_policy_runs(
    cluster: ClusterPath,
    name: PolicyPath,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    cursor: Annotated[
        str | None, Query(max_length=512, description="The next_cursor of the previous page")
    ] = None,
    limit: PageLimit = None,
) -> PolicyRunPage:
    """The policy's sweeps, newest first: what was planned, what was skipped and why, the deletion made.
    Visible to whoever may see the policy."""
    size = page_limit(runtime, limit)
    before = decode_cursor(cursor, BIG_ID)[0] if cursor is not None else None
    rows = await policies.list_runs(runtime, principal, cluster, name, before=before, limit=size)
    items = [PolicyRunRead.model_validate(r, from_attributes=True) for r in rows]
    return PolicyRunPage(items=items, next_cursor=encode_cursor(rows[-1].id) if len(rows) == size else None)
