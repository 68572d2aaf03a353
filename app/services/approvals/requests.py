"""The approval requests callers see and decide: a deletion's (``POST``/``GET
/v1/deletions/{id}/approvals``), a retention policy's, and the list of what a caller may approve.

A request is seen by whoever may see its subject (a deletion: its requester or DESCRIBE on every topic;
a policy: its owner or DESCRIBE on CLUSTER) and by the approvers its rules name; anyone else gets 404.
"""

from __future__ import annotations

from datetime import UTC, datetime

from app.adapters.db.approval_models import ApprovalDecision, ApprovalRequest
from app.adapters.db.repositories import approvals as repo
from app.adapters.db.repositories import deletions as deletions_repo
from app.adapters.db.repositories import policies as policies_repo
from app.adapters.db.session import read_session
from app.auth import Principal
from app.domain.approvals import ApprovalStatus, Decision, Requester, SubjectKind, refusal
from app.errors import ApprovalNotRequired, NotFound
from app.schemas.approvals import ApprovalCreate, ApprovalRead, DecisionRead
from app.services.approvals.decisions import (
    check_may_decide,
    current_rules,
    named_in,
    record,
    scope_of,
)
from app.services.approvals.requesters import requester_of
from app.services.retention.policy_access import visible_policies
from app.services.runtime import Runtime


def approval_read(request: ApprovalRequest, decisions: list[ApprovalDecision]) -> ApprovalRead:
    deletion = request.subject_kind == SubjectKind.DELETION.value
    return ApprovalRead(
        subject_kind=SubjectKind(request.subject_kind),
        deletion_id=request.subject_id if deletion else None,
        policy=None if deletion else request.subject_name,
        cluster=request.cluster,
        requester=request.requester,
        status=ApprovalStatus(request.status),
        rules=[rule["name"] for rule in request.rules],
        topics=list(request.topics),
        required_approvals=request.required_approvals,
        approvals=sum(d.decision == Decision.APPROVE.value for d in decisions),
        created_at=request.created_at,
        expires_at=request.expires_at,
        decided_at=request.decided_at,
        decisions=[DecisionRead.model_validate(d, from_attributes=True) for d in decisions],
        preview=request.preview,
    )


async def _visible(runtime: Runtime, principal: Principal, request: ApprovalRequest) -> bool:
    if request.subject_kind == SubjectKind.DELETION.value:
        return await runtime.authorization.can_view(principal, scope_of(request))
    if request.requester == principal.name:
        return True
    async with read_session(runtime.sessionmaker) as session:
        policy = await policies_repo.get_policy_by_id(session, request.subject_id)
    return policy is not None and bool(await visible_policies(runtime, principal, request.cluster, [policy]))


async def _request_seen(
    runtime: Runtime, principal: Principal, kind: SubjectKind, subject_id: str | None, what: str
) -> ApprovalRequest:
    """The subject's newest request; 404 when the caller may see neither it nor its subject, 409 when the
    subject exists and the caller sees it but it has no request (no rule protected it)."""
    request = None
    if subject_id is not None:
        async with read_session(runtime.sessionmaker) as session:
            request = await repo.latest_request(session, kind, subject_id)
            rules = await current_rules(session, request) if request is not None else []
    if (
        request is None
        and subject_id is not None
        and await _subject_seen(runtime, principal, kind, subject_id)
    ):
        raise ApprovalNotRequired(f"No approval is needed for {what}: no approval rule protected it.")
    if request is None or not (named_in(rules, principal) or await _visible(runtime, principal, request)):
        raise NotFound(f"No approval request for {what}.")
    return request


async def _subject_seen(runtime: Runtime, principal: Principal, kind: SubjectKind, subject_id: str) -> bool:
    """Whether the deletion or policy exists and the caller may see it."""
    async with read_session(runtime.sessionmaker) as session:
        if kind == SubjectKind.DELETION:
            deletion = await deletions_repo.get_deletion(session, subject_id)
            return deletion is not None and await runtime.authorization.can_view(principal, deletion)
        policy = await policies_repo.get_policy_by_id(session, subject_id)
    return policy is not None and bool(await visible_policies(runtime, principal, policy.cluster, [policy]))


async def read_approval(runtime: Runtime, principal: Principal, deletion_id: str) -> ApprovalRead:
    """A deletion's approval request: its rules, decisions and frozen preview."""
    request = await _request_seen(
        runtime, principal, SubjectKind.DELETION, deletion_id, f"deletion {deletion_id!r}"
    )
    async with read_session(runtime.sessionmaker) as session:
        return approval_read(request, await repo.decisions(session, [request.id]))


async def decide(
    runtime: Runtime,
    principal: Principal,
    kind: SubjectKind,
    subject_id: str | None,
    what: str,
    body: ApprovalCreate,
    *,
    request_id: str,
) -> ApprovalRead:
    """Record the caller's decision on the subject's pending request (404 unseen, 403 not an approver,
    409 no longer pending or decided already)."""
    request = await _request_seen(runtime, principal, kind, subject_id, what)
    async with read_session(runtime.sessionmaker) as session:
        rules = await current_rules(session, request)
        requester = await requester_of(session, request)
    approved_as = await check_may_decide(runtime, principal, request, rules, requester, request_id)
    decided = await record(
        runtime, principal, kind, request.subject_id, body, approved_as=approved_as, request_id=request_id
    )
    async with read_session(runtime.sessionmaker) as session:
        return approval_read(decided, await repo.decisions(session, [decided.id]))


async def decide_deletion(
    runtime: Runtime, principal: Principal, deletion_id: str, body: ApprovalCreate, *, request_id: str
) -> ApprovalRead:
    what = f"deletion {deletion_id!r}"
    return await decide(
        runtime, principal, SubjectKind.DELETION, deletion_id, what, body, request_id=request_id
    )


async def decide_policy(
    runtime: Runtime, principal: Principal, cluster: str, name: str, body: ApprovalCreate, *, request_id: str
) -> ApprovalRead:
    async with read_session(runtime.sessionmaker) as session:
        policy = await policies_repo.get_policy(session, cluster, name)
    what = f"policy {name!r} on {cluster!r}"
    subject = policy.id if policy is not None else None
    return await decide(runtime, principal, SubjectKind.POLICY, subject, what, body, request_id=request_id)


async def approvable(runtime: Runtime, principal: Principal, status: ApprovalStatus) -> list[ApprovalRead]:
    """The requests in ``status`` the caller may decide (or could have): an approver of every rule, not
    the requester, and (a deletion) allowed to see it."""
    now = datetime.now(UTC)
    shown = []
    requesters: dict[tuple[str, tuple[str, ...]], Requester] = {}
    async with read_session(runtime.sessionmaker) as session:
        requests = await repo.requests_in(session, status.value)
        for request in requests:
            if status is ApprovalStatus.PENDING and request.expires_at <= now:
                continue
            rules = await current_rules(session, request)
            asked = (request.requester, tuple(request.requester_groups))
            if asked not in requesters:
                requesters[asked] = await requester_of(session, request)
            if refusal(rules, principal.names, requesters[asked]) is None:
                shown.append(request)
        decisions = await repo.decisions(session, [r.id for r in shown])
    visible = [r for r in shown if await runtime.authorization.can_view(principal, scope_of(r))]
    return [approval_read(r, [d for d in decisions if d.request_id == r.id]) for r in visible]
