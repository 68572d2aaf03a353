"""The events of an approval request: held, each approver's decision, approved, rejected, expired."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from app.adapters.db.approval_models import ApprovalRequest
from app.audit.chain import NewEvent
from app.audit.events import EXECUTOR_PRINCIPAL, Actor, event


def approval_recorded(
    actor: Actor,
    cluster: str,
    deletion_id: str | None,
    *,
    subject_kind: str,
    subject: str,
    decision: str,
    comment: str | None,
    approved_as: Sequence[str],
    approvals: int,
    required_approvals: int,
    at: datetime,
) -> NewEvent:
    """One approver's decision (approve or reject) on a deletion or a retention policy; ``approvals``
    counts the approvals so far, this one included."""
    details = {
        "subject_kind": subject_kind,
        "subject": subject,
        "decision": decision,
        "comment": comment,
        "approved_as": list(approved_as),
        "approvals": approvals,
        "required_approvals": required_approvals,
    }
    return event("approval.recorded", actor, cluster, details, deletion_id=deletion_id, at=at)


def _waiting(request: ApprovalRequest) -> dict[str, Any]:
    return {
        "rules": [rule["name"] for rule in request.rules],
        "required_approvals": request.required_approvals,
        "expires_at": request.expires_at.isoformat(),
        "topics": request.topics,
    }


def _decided(request: ApprovalRequest, approvers: Sequence[str], comment: str | None) -> dict[str, Any]:
    details: dict[str, Any] = {
        "rules": [rule["name"] for rule in request.rules],
        "approvers": list(approvers),
    }
    if comment is not None:
        details["comment"] = comment
    return details


def deletion_awaiting_approval(actor: Actor, request: ApprovalRequest, at: datetime) -> NewEvent:
    return event(
        "deletion.awaiting_approval",
        actor,
        request.cluster,
        _waiting(request),
        deletion_id=request.subject_id,
        at=at,
    )


def deletion_approved(
    actor: Actor, request: ApprovalRequest, approvers: Sequence[str], at: datetime
) -> NewEvent:
    details = _decided(request, approvers, None)
    return event("deletion.approved", actor, request.cluster, details, deletion_id=request.subject_id, at=at)


def deletion_rejected(actor: Actor, request: ApprovalRequest, comment: str, at: datetime) -> NewEvent:
    details = _decided(request, [actor.principal], comment)
    return event("deletion.rejected", actor, request.cluster, details, deletion_id=request.subject_id, at=at)


def deletion_expired(request: ApprovalRequest, at: datetime) -> NewEvent:
    details = {
        "rules": [rule["name"] for rule in request.rules],
        "expires_at": request.expires_at.isoformat(),
    }
    executor = Actor(EXECUTOR_PRINCIPAL)
    return event(
        "deletion.expired", executor, request.cluster, details, deletion_id=request.subject_id, at=at
    )


def policy_awaiting_approval(actor: Actor, request: ApprovalRequest, at: datetime) -> NewEvent:
    details = {"policy": request.subject_name, **_waiting(request)}
    return event("policy.awaiting_approval", actor, request.cluster, details, at=at)


def policy_approved(
    actor: Actor, request: ApprovalRequest, approvers: Sequence[str], at: datetime
) -> NewEvent:
    details = {"policy": request.subject_name, **_decided(request, approvers, None)}
    return event("policy.approved", actor, request.cluster, details, at=at)


def policy_rejected(actor: Actor, request: ApprovalRequest, comment: str, at: datetime) -> NewEvent:
    details = {"policy": request.subject_name, **_decided(request, [actor.principal], comment)}
    return event("policy.rejected", actor, request.cluster, details, at=at)


def policy_approval_expired(request: ApprovalRequest, at: datetime) -> NewEvent:
    details = {"policy": request.subject_name, "expires_at": request.expires_at.isoformat()}
    return event("policy.approval_expired", Actor(EXECUTOR_PRINCIPAL), request.cluster, details, at=at)
