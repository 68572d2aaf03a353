"""/v1/clusters/{cluster}/approval-rules: which topics need whose approval before records in them are
deleted (``app.services.approvals.rules``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Response

from app.api.examples import APPROVAL_RULE_EXAMPLES, APPROVAL_RULE_NAME, APPROVAL_RULE_UPDATE_EXAMPLES
from app.api.paths import ClusterPath
from app.api.routing import RequestIdDep, RuntimeDep, StrictJsonRoute
from app.auth import PrincipalDep
from app.schemas.approvals import ApprovalRuleCreate, ApprovalRulePage, ApprovalRuleRead, ApprovalRuleUpdate
from app.schemas.common import problem_responses
from app.services.approvals import rules
from app.services.approvals.rules import rule_read

router = APIRouter(
    prefix="/v1/clusters/{cluster}/approval-rules", tags=["approvals"], route_class=StrictJsonRoute
)

RulePath = Annotated[
    str,
    Path(
        min_length=1,
        max_length=255,
        pattern=r"^[A-Za-z0-9._-]+$",
        description="The rule's name",
        openapi_examples={"demo": {"summary": "The demo's rule", "value": APPROVAL_RULE_NAME}},
    ),
]


@router.post(
    "", status_code=201, response_model=ApprovalRuleRead, responses=problem_responses(401, 403, 404, 409, 422)
)
async def create_approval_rule(
    cluster: ClusterPath,
    body: Annotated[ApprovalRuleCreate, Body(openapi_examples=APPROVAL_RULE_EXAMPLES)],
    response: Response,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> ApprovalRuleRead:
    """Create an approval rule (needs ALTER on CLUSTER); 409 if the cluster has one of that name."""
    rule = await rules.create_rule(runtime, principal, cluster, body, request_id=request_id)
    response.headers["Location"] = f"/v1/clusters/{cluster}/approval-rules/{rule.name}"
    return rule_read(rule)


@router.get("", response_model=ApprovalRulePage, responses=problem_responses(401, 403, 404, 422))
async def list_approval_rules(
    cluster: ClusterPath, principal: PrincipalDep, runtime: RuntimeDep, request_id: RequestIdDep
) -> ApprovalRulePage:
    """List the cluster's approval rules (needs DESCRIBE on CLUSTER)."""
    found = await rules.list_rules(runtime, principal, cluster, request_id=request_id)
    return ApprovalRulePage(items=[rule_read(rule) for rule in found])


@router.get("/{name}", response_model=ApprovalRuleRead, responses=problem_responses(401, 403, 404, 422))
async def get_approval_rule(
    cluster: ClusterPath,
    name: RulePath,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> ApprovalRuleRead:
    """Read an approval rule (needs DESCRIBE on CLUSTER)."""
    return rule_read(await rules.get_rule(runtime, principal, cluster, name, request_id=request_id))


@router.patch("/{name}", response_model=ApprovalRuleRead, responses=problem_responses(401, 403, 404, 422))
async def update_approval_rule(
    cluster: ClusterPath,
    name: RulePath,
    body: Annotated[ApprovalRuleUpdate, Body(openapi_examples=APPROVAL_RULE_UPDATE_EXAMPLES)],
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> ApprovalRuleRead:
    """Change an approval rule (needs ALTER on CLUSTER); waiting requests are decided by its approvers
    as they are now."""
    rule = await rules.update_rule(runtime, principal, cluster, name, body, request_id=request_id)
    return rule_read(rule)


@router.delete("/{name}", status_code=204, responses=problem_responses(401, 403, 404, 422))
async def delete_approval_rule(
    cluster: ClusterPath,
    name: RulePath,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> Response:
    """Delete an approval rule (needs ALTER on CLUSTER); waiting requests keep its approvers as they were."""
    await rules.delete_rule(runtime, principal, cluster, name, request_id=request_id)
    return Response(status_code=204)
