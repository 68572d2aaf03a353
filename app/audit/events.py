"""One builder per audit action: each returns the :class:`~app.audit.chain.NewEvent` to append.

The action names (dotted verbs) and which fields each event fills live here only; callers give who acted
(:class:`Actor`), where, and what the action's details are. Details that take a module of their own to
make (a deletion's request, its completion summary, a preview) are made there and passed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from app.audit.chain import NewEvent

# The principal of the events the executor writes on its own (a partition failed, a deletion ended).
EXECUTOR_PRINCIPAL = "Service:kafka-purge-executor"


class Caller(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def client_host(self) -> str: ...


@dataclass(frozen=True)
class Actor:
    """Who acted: the principal, the address the request came from, the request's id."""

    principal: str
    client_host: str | None = None
    request_id: str | None = None

    @classmethod
    def of(cls, caller: Caller, request_id: str | None) -> Actor:
        return cls(caller.name, caller.client_host, request_id)


def _event(
    action: str,
    actor: Actor,
    cluster: str | None,
    details: Mapping[str, Any],
    *,
    deletion_id: str | None = None,
    at: datetime | None = None,
) -> NewEvent:
    return NewEvent(
        action, actor.principal, actor.client_host, actor.request_id, cluster, deletion_id, details, at
    )


def authz_denied(actor: Actor, cluster: str | None, details: Mapping[str, Any]) -> NewEvent:
    return _event("authz.denied", actor, cluster, details)


def deletion_requested(actor: Actor, cluster: str, deletion_id: str, details: Mapping[str, Any]) -> NewEvent:
    return _event("deletion.requested", actor, cluster, details, deletion_id=deletion_id)


def deletion_previewed(actor: Actor, cluster: str, details: Mapping[str, Any], at: datetime) -> NewEvent:
    return _event("deletion.previewed", actor, cluster, details, at=at)


def deletion_cancelled(
    actor: Actor,
    cluster: str,
    deletion_id: str,
    cancelled: Sequence[tuple[str, int]],
    status: str,
    at: datetime,
) -> NewEvent:
    details = {"cancelled": [{"topic": t, "partition": p} for t, p in cancelled], "status": status}
    return _event("deletion.cancelled", actor, cluster, details, deletion_id=deletion_id, at=at)


def deletion_partition_failed(
    request_id: str | None, cluster: str, deletion_id: str, details: Mapping[str, Any]
) -> NewEvent:
    executor = Actor(EXECUTOR_PRINCIPAL, None, request_id)
    return _event("deletion.partition_failed", executor, cluster, details, deletion_id=deletion_id)


def deletion_completed(
    request_id: str | None, cluster: str, deletion_id: str, details: Mapping[str, Any]
) -> NewEvent:
    executor = Actor(EXECUTOR_PRINCIPAL, None, request_id)
    return _event("deletion.completed", executor, cluster, details, deletion_id=deletion_id)


def acl_created(actor: Actor, cluster: str, bindings: Sequence[Mapping[str, Any]]) -> NewEvent:
    return _event("acl.created", actor, cluster, {"bindings": list(bindings)})


def acl_deleted(actor: Actor, cluster: str, bindings: Sequence[Mapping[str, Any]]) -> NewEvent:
    return _event("acl.deleted", actor, cluster, {"bindings": list(bindings)})


def policy_created(actor: Actor, cluster: str, policy: Mapping[str, Any]) -> NewEvent:
    return _event("policy.created", actor, cluster, policy)


def policy_updated(actor: Actor, cluster: str, policy: Mapping[str, Any]) -> NewEvent:
    return _event("policy.updated", actor, cluster, policy)


def policy_deleted(actor: Actor, cluster: str, policy: Mapping[str, Any]) -> NewEvent:
    return _event("policy.deleted", actor, cluster, policy)


def policy_swept(
    owner: Actor,
    cluster: str,
    *,
    policy: str,
    run_id: int,
    status: str,
    partitions_planned: int,
    deletion_id: str | None,
    deletion_ids: Sequence[str],
    skip_counts: Mapping[str, int],
    warnings: Sequence[str],
    error: str | None,
    at: datetime,
) -> NewEvent:
    """A retention sweep that deleted, was held for approval or failed (one with nothing to do is not
    audited); ``deletion_id`` is its first deletion."""
    details = {
        "policy": policy,
        "run_id": run_id,
        "status": status,
        "partitions_planned": partitions_planned,
        "deletion_ids": list(deletion_ids),
        "skip_counts": dict(skip_counts),
        "warnings": list(warnings),
        "error": error,
    }
    return _event("policy.swept", owner, cluster, details, deletion_id=deletion_id, at=at)


def consumer_registered(actor: Actor, cluster: str, details: Mapping[str, Any], at: datetime) -> NewEvent:
    return _event("consumer.registered", actor, cluster, details, at=at)


def consumer_query_changed(actor: Actor, cluster: str, details: Mapping[str, Any], at: datetime) -> NewEvent:
    return _event("consumer.query_changed", actor, cluster, details, at=at)


def approval_rule_created(actor: Actor, cluster: str, rule: Mapping[str, Any]) -> NewEvent:
    return _event("approval_rule.created", actor, cluster, rule)


def approval_rule_updated(actor: Actor, cluster: str, rule: Mapping[str, Any]) -> NewEvent:
    return _event("approval_rule.updated", actor, cluster, rule)


def approval_rule_exempted(actor: Actor, cluster: str, details: Mapping[str, Any]) -> NewEvent:
    """An administrator exempted a rule from ways of deleting (``exemptions``): those run unapproved."""
    return _event("approval_rule.exempted", actor, cluster, details)


def approval_rule_deleted(actor: Actor, cluster: str, rule: Mapping[str, Any]) -> NewEvent:
    return _event("approval_rule.deleted", actor, cluster, rule)


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
    return _event("approval.recorded", actor, cluster, details, deletion_id=deletion_id, at=at)


def deletion_awaiting_approval(
    actor: Actor, cluster: str, deletion_id: str, details: Mapping[str, Any], at: datetime
) -> NewEvent:
    return _event("deletion.awaiting_approval", actor, cluster, details, deletion_id=deletion_id, at=at)


def deletion_approved(
    actor: Actor, cluster: str, deletion_id: str, details: Mapping[str, Any], at: datetime
) -> NewEvent:
    return _event("deletion.approved", actor, cluster, details, deletion_id=deletion_id, at=at)


def deletion_rejected(
    actor: Actor, cluster: str, deletion_id: str, details: Mapping[str, Any], at: datetime
) -> NewEvent:
    return _event("deletion.rejected", actor, cluster, details, deletion_id=deletion_id, at=at)


def deletion_expired(cluster: str, deletion_id: str, details: Mapping[str, Any], at: datetime) -> NewEvent:
    executor = Actor(EXECUTOR_PRINCIPAL)
    return _event("deletion.expired", executor, cluster, details, deletion_id=deletion_id, at=at)


def policy_awaiting_approval(
    actor: Actor, cluster: str, details: Mapping[str, Any], at: datetime
) -> NewEvent:
    return _event("policy.awaiting_approval", actor, cluster, details, at=at)


def policy_approved(actor: Actor, cluster: str, details: Mapping[str, Any], at: datetime) -> NewEvent:
    return _event("policy.approved", actor, cluster, details, at=at)


def policy_rejected(actor: Actor, cluster: str, details: Mapping[str, Any], at: datetime) -> NewEvent:
    return _event("policy.rejected", actor, cluster, details, at=at)


def policy_approval_expired(cluster: str, details: Mapping[str, Any], at: datetime) -> NewEvent:
    return _event("policy.approval_expired", Actor(EXECUTOR_PRINCIPAL), cluster, details, at=at)


def webhook_created(actor: Actor, cluster: str, webhook: Mapping[str, Any]) -> NewEvent:
    return _event("webhook.created", actor, cluster, webhook)


def webhook_updated(actor: Actor, cluster: str, webhook: Mapping[str, Any]) -> NewEvent:
    return _event("webhook.updated", actor, cluster, webhook)


def webhook_deleted(actor: Actor, cluster: str, webhook: Mapping[str, Any]) -> NewEvent:
    return _event("webhook.deleted", actor, cluster, webhook)


def webhook_delivery_retried(
    actor: Actor, cluster: str, deletion_id: str, details: Mapping[str, Any]
) -> NewEvent:
    return _event("webhook.delivery_retried", actor, cluster, details, deletion_id=deletion_id)
