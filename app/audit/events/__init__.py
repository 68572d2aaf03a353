"""One builder per audit action: each returns the :class:`~app.audit.chain.NewEvent` to append.

The action names (dotted verbs) and which fields each event fills live here only; callers give who acted
(:class:`Actor`), where, and the facts the details are made of. Details that take a module of their own to
make (a deletion's request, its completion summary, a preview) are made there and passed in. The events
of an approval request are built in :mod:`app.audit.events.approval_requests`, ``authz.denied`` in
:mod:`app.audit.events.denials`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from app.adapters.db.repositories.write_back import PartitionUpdate
from app.audit.chain import NewEvent
from app.domain.deletion_requests import DeletionStatus, PartitionStatus
from app.domain.ports import Claim

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


def event(
    action: str,
    actor: Actor,
    cluster: str | None,
    details: Mapping[str, Any],
    *,
    deletion_id: str | None = None,
    at: datetime | None = None,
) -> NewEvent:
    """``action`` by ``actor``: what every builder returns, here and in this package's other modules."""
    return NewEvent(
        action, actor.principal, actor.client_host, actor.request_id, cluster, deletion_id, details, at
    )


def deletion_requested(actor: Actor, cluster: str, deletion_id: str, details: Mapping[str, Any]) -> NewEvent:
    return event("deletion.requested", actor, cluster, details, deletion_id=deletion_id)


def deletion_previewed(actor: Actor, cluster: str, details: Mapping[str, Any], at: datetime) -> NewEvent:
    return event("deletion.previewed", actor, cluster, details, at=at)


def deletion_cancelled(
    actor: Actor,
    cluster: str,
    deletion_id: str,
    cancelled: Sequence[tuple[str, int]],
    status: str,
    at: datetime,
) -> NewEvent:
    details = {"cancelled": [{"topic": t, "partition": p} for t, p in cancelled], "status": status}
    return event("deletion.cancelled", actor, cluster, details, deletion_id=deletion_id, at=at)


def deletion_partition_failed(claim: Claim, update: PartitionUpdate, worker: str) -> NewEvent:
    """The executor's: one partition's DeleteRecords failed for good (``update`` is what it wrote)."""
    details = {
        "topic": claim.topic,
        "partition": claim.partition,
        "resolved_offset": claim.resolved_offset,
        "error_code": update.error_code,
        "error_message": update.error_message,
        "low_watermark": update.low_watermark,
        "leader_log_start_offset": update.leader_log_start_offset,
        "attempts": claim.attempts,
        "worker": worker,
        "fence": claim.fence,
    }
    executor = Actor(EXECUTOR_PRINCIPAL, None, claim.request_id)
    return event("deletion.partition_failed", executor, claim.cluster, details, deletion_id=claim.deletion_id)


def deletion_completed(
    sample: Claim,
    status: DeletionStatus,
    counts: Mapping[PartitionStatus, int],
    partitions: Mapping[str, list[Any]],
    worker: str,
) -> NewEvent:
    """The executor's: ``sample``'s deletion ended. ``partitions``: every partition's outcome column by
    column (``write_back.partition_outcomes``): ``topic``, ``partition``, ``resolved_offset``,
    ``status``, ``low_watermark``, ``leader_log_start_offset``, ``error_code``, ``attempts``, ``fence``
    and ``worker`` map to lists whose i-th entries are one partition, in (topic, partition) order. At
    10,000 partitions that encodes and hashes several times faster than one object per partition."""
    details = {
        "status": status.value,
        "counts": {s.value: n for s, n in sorted(counts.items())},
        "worker": worker,
        "partitions": partitions,
    }
    executor = Actor(EXECUTOR_PRINCIPAL, None, sample.request_id)
    return event("deletion.completed", executor, sample.cluster, details, deletion_id=sample.deletion_id)


def acl_created(actor: Actor, cluster: str, bindings: Sequence[Mapping[str, Any]]) -> NewEvent:
    return event("acl.created", actor, cluster, {"bindings": list(bindings)})


def acl_deleted(actor: Actor, cluster: str, bindings: Sequence[Mapping[str, Any]]) -> NewEvent:
    return event("acl.deleted", actor, cluster, {"bindings": list(bindings)})


# A policy's, a rule's and a webhook's events carry the resource as the API reads it (``read``).
def policy_created(actor: Actor, cluster: str, policy: str, read: Mapping[str, Any]) -> NewEvent:
    return event("policy.created", actor, cluster, {"policy": policy, **read})


def policy_updated(actor: Actor, cluster: str, policy: str, read: Mapping[str, Any]) -> NewEvent:
    return event("policy.updated", actor, cluster, {"policy": policy, **read})


def policy_deleted(actor: Actor, cluster: str, policy: str, read: Mapping[str, Any]) -> NewEvent:
    return event("policy.deleted", actor, cluster, {"policy": policy, **read})


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
    return event("policy.swept", owner, cluster, details, deletion_id=deletion_id, at=at)


class SparkBatch(Protocol):
    """The query and batch a Spark consumer's progress report names."""

    @property
    def query_id(self) -> str: ...

    @property
    def run_id(self) -> str: ...

    @property
    def batch_id(self) -> int: ...


def _batch(consumer: str, batch: SparkBatch) -> dict[str, Any]:
    return {
        "consumer": consumer,
        "query_id": batch.query_id,
        "run_id": batch.run_id,
        "batch_id": batch.batch_id,
    }


def consumer_registered(
    actor: Actor,
    cluster: str,
    consumer: str,
    at: datetime,
    *,
    kind: str | None = None,
    checkpoint_location: str | None = None,
    batch: SparkBatch | None = None,
) -> NewEvent:
    """A consumer registered through the API (its ``kind`` and checkpoint location), or by the first
    report of a Spark query (its ``batch``)."""
    if batch is not None:
        details = _batch(consumer, batch)
    else:
        details = {"consumer": consumer, "kind": kind, "checkpoint_location": checkpoint_location}
    return event("consumer.registered", actor, cluster, details, at=at)


def consumer_query_changed(
    actor: Actor, cluster: str, consumer: str, batch: SparkBatch, at: datetime
) -> NewEvent:
    """A new Spark query reports for the consumer (its positions may go back)."""
    return event("consumer.query_changed", actor, cluster, _batch(consumer, batch), at=at)


def approval_rule_created(actor: Actor, cluster: str, rule: str, read: Mapping[str, Any]) -> NewEvent:
    return event("approval_rule.created", actor, cluster, {"rule": rule, **read})


def approval_rule_updated(actor: Actor, cluster: str, rule: str, read: Mapping[str, Any]) -> NewEvent:
    return event("approval_rule.updated", actor, cluster, {"rule": rule, **read})


def approval_rule_exempted(
    actor: Actor, cluster: str, rule: str, granted: Sequence[str], exemptions: Sequence[str]
) -> NewEvent:
    """An administrator exempted a rule from ways of deleting (``granted`` now, ``exemptions`` in all):
    those run unapproved."""
    details = {"rule": rule, "granted": list(granted), "exemptions": list(exemptions)}
    return event("approval_rule.exempted", actor, cluster, details)


def approval_rule_deleted(actor: Actor, cluster: str, rule: str, read: Mapping[str, Any]) -> NewEvent:
    return event("approval_rule.deleted", actor, cluster, {"rule": rule, **read})


def webhook_created(actor: Actor, cluster: str, webhook: Mapping[str, Any]) -> NewEvent:
    return event("webhook.created", actor, cluster, webhook)


def webhook_updated(
    actor: Actor, cluster: str, webhook: Mapping[str, Any], changed: Sequence[str]
) -> NewEvent:
    return event("webhook.updated", actor, cluster, {**webhook, "changed": sorted(changed)})


def webhook_deleted(actor: Actor, cluster: str, webhook: Mapping[str, Any]) -> NewEvent:
    return event("webhook.deleted", actor, cluster, webhook)


def webhook_delivery_retried(
    actor: Actor,
    cluster: str,
    deletion_id: str,
    *,
    webhook_id: str,
    delivery_id: int,
    event_id: str,
    was: str,
) -> NewEvent:
    """A delivery sent again on request; ``was`` is the status it had."""
    details = {"webhook_id": webhook_id, "delivery_id": delivery_id, "event_id": event_id, "was": was}
    return event("webhook.delivery_retried", actor, cluster, details, deletion_id=deletion_id)
