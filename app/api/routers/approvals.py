"""Four-eyes approval decisions: a deletion's (``/v1/deletions/{id}/approvals``), a retention policy's
(``/v1/clusters/{cluster}/policies/{name}/approvals``), and ``/v1/approvals``, what the caller may approve
(``app.services.approvals.requests``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query, Request

from app.api.examples import APPROVAL_EXAMPLES
from app.api.paths import ClusterPath
from app.api.routers.deletions import DeletionId
from app.api.routers.policies import PolicyPath
from app.api.routing import RequestIdDep, RuntimeDep, StrictJsonRoute
from app.auth import PrincipalDep
from app.domain.approvals import ApprovalStatus
from app.schemas.approvals import ApprovalCreate, ApprovalPage, ApprovalRead
from app.schemas.common import problem_responses
from app.services.approvals import requests

router = APIRouter(tags=["approvals"], route_class=StrictJsonRoute)

DecisionBody = Annotated[ApprovalCreate, Body(openapi_examples=APPROVAL_EXAMPLES)]


@router.get("/v1/approvals", response_model=ApprovalPage, responses=problem_responses(401, 422))
async def list_approvals(
    principal: PrincipalDep,
    runtime: RuntimeDep,
    status: Annotated[
        ApprovalStatus, Query(description="Requests in this status (default: pending, not yet expired)")
    ] = ApprovalStatus.PENDING,
) -> ApprovalPage:
    """List the approval requests the caller may decide: an approver of every rule they match, never
    their own, oldest first."""
    return ApprovalPage(items=await requests.approvable(runtime, principal, status))


@router.post(
    "/v1/deletions/{deletion_id}/approvals",
    response_model=ApprovalRead,
    responses=problem_responses(401, 403, 404, 409, 422),
)
async def decide_deletion(
    deletion_id: DeletionId,
    body: DecisionBody,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> ApprovalRead:
    """Approve or reject a deletion awaiting approval; the last approval needed hands it to the executor,
    a rejection ends it."""
    return await requests.decide_deletion(runtime, principal, deletion_id, body, request_id=request_id)


@router.get(
    "/v1/deletions/{deletion_id}/approvals",
    response_model=ApprovalRead,
    responses=problem_responses(401, 404, 409, 422),
)
async def read_deletion_approval(
    deletion_id: DeletionId, principal: PrincipalDep, runtime: RuntimeDep
) -> ApprovalRead:
    """A protected deletion's approval request: its rules, decisions and the preview frozen when it was
    asked for."""
    return await requests.read_approval(runtime, principal, deletion_id)


@router.post(
    "/v1/clusters/{cluster}/policies/{name}/approvals",
    response_model=ApprovalRead,
    responses=problem_responses(401, 403, 404, 409, 422),
)
async def decide_policy(
    cluster: ClusterPath,
    name: PolicyPath,
    body: DecisionBody,
    request: Request,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> ApprovalRead:
    """Approve or reject a retention policy awaiting approval (created or widened over protected topics);
    approved, its sweeps run unattended."""
    decided = await requests.decide_policy(runtime, principal, cluster, name, body, request_id=request_id)
    scheduler = getattr(request.app.state, "scheduler", None)
    if scheduler is not None:
        scheduler.wake()
    return decided
