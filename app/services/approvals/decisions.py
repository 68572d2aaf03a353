"""Approvers' decisions on a protected deletion or retention policy, and what a caller may approve.

A caller may decide when, under every rule the request matched (its current approvers while the rule
exists, else the approvers it had when the request was made), one of their principals is an approver
and is neither the requester's user nor a group the requester belongs to (as recorded when they asked,
or as their tokens reported since: ``app.services.approvals.requesters``; when neither knows their
groups, only a listed user approves); and when they may still
DESCRIBE every topic of it (KIP-11, decided now: revoked rights refuse the decision, audited). Each
principal decides once; a rejection ends the request; the ``required``-th approval approves it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.approval_models import ApprovalDecision, ApprovalRequest
from app.adapters.db.repositories import approvals as repo
from app.adapters.db.session import write_transaction
from app.audit import append_event
from app.audit.events import Actor, approval_requests, denials
from app.audit.events.denials import ApprovalDenial
from app.auth import Principal
from app.domain.approvals import (
    ApprovalStatus,
    Decision,
    Requester,
    RuleSnapshot,
    SubjectKind,
    approving_identities,
    refusal,
)
from app.errors import Conflict, Forbidden, NotFound
from app.schemas.approvals import ApprovalCreate
from app.services.approvals import transitions
from app.services.runtime import Runtime


@dataclass(frozen=True)
class Scope:
    """A request as ``KafkaAclAuthorization.can_view`` sees a deletion: who asked, where, which topics."""

    principal: str
    cluster: str
    topics: list[str]


def scope_of(request: ApprovalRequest) -> Scope:
    return Scope(request.requester, request.cluster, list(request.topics))


async def current_rules(session: AsyncSession, request: ApprovalRequest) -> list[RuleSnapshot]:
    """The request's rules with the approvers they have now (as stored when a rule was deleted since)."""
    rules = []
    for stored in request.rules:
        rule = await repo.get_rule(session, request.cluster, stored["name"])
        approvers = tuple(rule.approvers) if rule is not None else tuple(stored["approvers"])
        rules.append(RuleSnapshot(stored["name"], approvers, stored["required"]))
    return rules


def named_in(rules: Sequence[RuleSnapshot], principal: Principal) -> bool:
    """Whether any rule names one of the caller's principals (an approver sees the request)."""
    return any(name in rule.approvers for rule in rules for name in principal.names)


async def refuse(
    runtime: Runtime, principal: Principal, request: ApprovalRequest, why: str, request_id: str
) -> None:
    """403, audited as ``authz.denied`` in a transaction of its own."""
    denial = ApprovalDenial(request.subject_kind, request.subject_name, why)
    deletion_id = request.subject_id if request.subject_kind == SubjectKind.DELETION.value else None
    async with write_transaction(runtime.sessionmaker) as session:
        await append_event(
            session, denials.authz_denied(Actor.of(principal, request_id), request.cluster, denial)
        )
    raise Forbidden(f"{principal.name} may not approve this request: {why}.", deletion_id=deletion_id)


async def check_may_decide(
    runtime: Runtime,
    principal: Principal,
    request: ApprovalRequest,
    rules: Sequence[RuleSnapshot],
    requester: Requester,
    request_id: str,
) -> list[str]:
    """The approver principals the caller decides as; 403 (audited) when they may not decide."""
    if (why := refusal(rules, principal.names, requester)) is not None:
        await refuse(runtime, principal, request, why, request_id)
    await runtime.authorization.check_describe_topics(
        principal, request.cluster, list(request.topics), request_id=request_id
    )
    return sorted(
        {n for rule in rules for n in approving_identities(rule.approvers, principal.names, requester)}
    )


def _still_pending(request: ApprovalRequest, now: datetime) -> None:
    if request.status != ApprovalStatus.PENDING.value:
        raise Conflict(f"This request is {request.status}: it takes no more decisions.")
    if request.expires_at <= now:
        raise Conflict("This request has expired: it takes no more decisions.")


async def record(
    runtime: Runtime,
    principal: Principal,
    kind: SubjectKind,
    subject_id: str,
    body: ApprovalCreate,
    *,
    approved_as: list[str],
    request_id: str,
) -> ApprovalRequest:
    """Store the decision and what it brings about (approved, rejected) in one transaction; 409 when the
    request is no longer pending or the caller decided already."""
    now = datetime.now(UTC)
    actor = Actor.of(principal, request_id)
    try:
        async with write_transaction(runtime.sessionmaker) as session:
            request = await repo.latest_request(session, kind, subject_id, for_update=True)
            if request is None:  # its policy was deleted meanwhile
                raise NotFound("The approval request is gone.")
            _still_pending(request, now)
            earlier = await repo.decisions(session, [request.id])
            if any(d.principal == principal.name for d in earlier):
                raise Conflict(f"{principal.name} has decided on this request already.")
            decision = ApprovalDecision(
                request_id=request.id,
                principal=principal.name,
                approved_as=approved_as,
                decision=body.decision.value,
                comment=body.comment,
                decided_at=now,
            )
            await repo.add(session, decision)
            approvers = [d.principal for d in [*earlier, decision] if d.decision == Decision.APPROVE.value]
            deletion_id = subject_id if kind is SubjectKind.DELETION else None
            recorded = approval_requests.approval_recorded(
                actor,
                request.cluster,
                deletion_id,
                subject_kind=kind.value,
                subject=request.subject_name,
                decision=body.decision.value,
                comment=body.comment,
                approved_as=approved_as,
                approvals=len(approvers),
                required_approvals=request.required_approvals,
                at=now,
            )
            await append_event(session, recorded)
            await _conclude(session, request, body, approvers, actor, now)
    except IntegrityError as exc:  # the same principal's concurrent decision won
        raise Conflict(f"{principal.name} has decided on this request already.") from exc
    approved = request.status == ApprovalStatus.APPROVED.value
    if approved and kind is SubjectKind.DELETION and runtime.executor is not None:
        runtime.executor.wake()  # its partitions are pending now: the existing claim path sends them
    return request


async def _conclude(
    session: AsyncSession,
    request: ApprovalRequest,
    body: ApprovalCreate,
    approvers: list[str],
    actor: Actor,
    now: datetime,
) -> None:
    deletion = request.subject_kind == SubjectKind.DELETION.value
    if body.decision is Decision.REJECT:
        if deletion:
            await transitions.reject_deletion(session, request, body.comment, actor, now)
        else:
            await transitions.reject_policy(session, request, body.comment, actor, now)
    elif len(approvers) >= request.required_approvals:
        if deletion:
            await transitions.approve_deletion(session, request, approvers, actor, now)
        else:
            await transitions.approve_policy(session, request, approvers, actor, now)
