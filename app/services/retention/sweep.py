"""One sweep of a retention policy: read the cluster and the consumers, plan, submit, record.

The sweep submits domain ``DeletionCommand``s (``submit_command``), which take the same path as
``POST /v1/deletions``: same checks, executor, statuses and audit, with ``reason: "policy <name>"``, as
the policy's owner principal, so the owner's right to delete the topics is checked again at every sweep:
first per matched topic (a topic the owner may no longer DELETE on is skipped with
``owner_not_authorized`` and the refusal audited, the other topics are still swept; the run is
``denied`` when that leaves nothing), then by the submission. The planner already bounded every
partition by the policy's consumers, so the command sets ``allow_unconsumed`` and ``consumers_read``:
the submission does not read the cluster's groups again, and groups the policy leaves out were left out
on purpose (with ``all_groups`` none is). A plan larger than ``max_partitions`` is submitted as several
deletions, all recorded in the run.

Kafka Connect sinks (``consumers.connect``) are read from Connect's REST API first: a Connect cluster that
cannot be read fails the run (fail closed), a connector whose topics are unknown holds back every matched
partition (``connector_topics_unknown``). With ``await_previous_deletion`` the sweep starts only once
every deletion of the policy's previous sweep is terminal (status ``waiting`` otherwise). A policy whose
four-eyes approval is pending (or was rejected or expired) deletes nothing: every partition it matches is
skipped with ``awaiting_approval`` and the run is ``waiting``; so does a sweep that matches a protected
topic the policy's last approval did not answer for, which holds the policy for approval first
(``app.services.approvals.policies``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from app.adapters.db.repositories import policies as policy_repo
from app.adapters.db.retention_models import RetentionPolicy
from app.adapters.db.session import read_session
from app.auth import Principal
from app.domain.commands import Cut, DeletionCommand
from app.domain.connect import ConnectUnavailable, SinkReading
from app.domain.ports import Requester, TopicPartition
from app.domain.retention import (
    ConsumerSelection,
    RetentionRules,
    Skip,
    SkipReason,
    SweepPlan,
    plan_sweep,
)
from app.domain.topic_patterns import TopicSelector
from app.errors import Forbidden, PurgeError
from app.services.approvals.policies import hold_at_sweep
from app.services.deletions.submission import submit_command
from app.services.retention.connect import connector_topics, policy_sinks
from app.services.retention.positions import collect_view
from app.services.runtime import Runtime

log = logging.getLogger("kafka_purge.retention")

MAX_SKIPPED_LISTED = 100
MAX_WARNINGS = 20


@dataclass
class SweepResult:
    status: str  # submitted, nothing_to_delete, waiting, denied, failed
    matched: int = 0
    plan: SweepPlan = field(default_factory=SweepPlan)
    deletion_ids: list[str] = field(default_factory=list)
    error: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def deletion_id(self) -> str | None:
        return self.deletion_ids[0] if self.deletion_ids else None


def topic_selector(topics: Mapping[str, Any]) -> TopicSelector | None:
    """The stored selection's pattern; None when the topics are only those the connectors read."""
    if topics.get("prefix") is None and topics.get("regex") is None and not topics.get("names"):
        return None
    return TopicSelector.of(topics)


def rules_of(policy: RetentionPolicy) -> RetentionRules:
    chosen = policy.consumers
    consumers = ConsumerSelection(
        groups=tuple(chosen.get("groups") or ()),
        spark=tuple(chosen.get("spark") or ()),
        all_groups=bool(chosen.get("all_groups")),
        connect=chosen.get("connect") is not None,
    )
    return RetentionRules(
        topic_selector(policy.topics),
        consumers,
        policy.min_age_seconds,
        policy.min_records,
        skip_foreign_active_groups=policy.skip_foreign_active_groups,
    )


def owner_principal(policy: RetentionPolicy) -> Principal:
    return Principal(
        user=policy.owner.removeprefix("User:"),
        groups=tuple(policy.owner_groups),
        client_host=policy.owner_host,
    )


def deletion_command(policy: RetentionPolicy, cuts: dict[TopicPartition, int]) -> DeletionCommand:
    """The deletion a sweep submits: its cuts, as the policy's owner, with ``reason: "policy <name>"``.
    Every cut is bounded by the policy's consumers (``consumers_read``); groups the policy leaves out
    were left out on purpose, so unconsumed records are allowed."""
    return DeletionCommand(
        cluster=policy.cluster,
        cuts=tuple(Cut(tp.topic, tp.partition, offset) for tp, offset in sorted(cuts.items())),
        leader_only=policy.leader_only,
        reason=f"policy {policy.name}",
        as_whom=Requester(policy.owner, tuple(policy.owner_groups), policy.owner_host),
        allow_unconsumed=True,
        consumers_read=True,
    )


async def withhold_unauthorized(
    runtime: Runtime, policy: RetentionPolicy, partitions: Sequence[TopicPartition]
) -> tuple[list[TopicPartition], dict[TopicPartition, Skip], str | None]:
    """The partitions whose topic the owner may still DELETE on; the others skipped with the reason, and
    the refusal (audited as ``authz.denied``) when there was one."""
    owner = owner_principal(policy)
    topics = sorted({tp.topic for tp in partitions})
    revoked = await runtime.authorization.revoked_topics(
        policy.cluster, owner.names, owner.client_host, topics
    )
    if not revoked:
        return list(partitions), {}, None
    refusal: str | None = None
    try:
        await runtime.authorization.check_delete_topics(owner, policy.cluster, sorted(revoked))
    except Forbidden as exc:
        refusal = exc.detail
    skipped = {
        tp: Skip(
            SkipReason.OWNER_NOT_AUTHORIZED, f"{owner.name} may not DELETE on {tp.topic}: {revoked[tp.topic]}"
        )
        for tp in partitions
        if tp.topic in revoked
    }
    return [tp for tp in partitions if tp.topic not in revoked], skipped, refusal


async def matching_partitions(
    runtime: Runtime, policy: RetentionPolicy, rules: RetentionRules, sinks: SinkReading | None
) -> list[TopicPartition]:
    """The partitions of the topics the policy covers (with ``read_by_connectors``: those the sinks read,
    intersected with the pattern)."""
    cluster = policy.cluster
    selector = rules.topics
    if selector is not None and selector.names:
        topics = list(selector.names)
    else:
        topics = await runtime.gateway.list_topics(cluster)
    chosen = selector.select(topics) if selector is not None else sorted(topics)
    if policy.topics.get("read_by_connectors"):
        read = connector_topics(sinks) if sinks is not None else set()
        chosen = [t for t in chosen if t in read]
    counts = await runtime.gateway.topic_partitions(cluster, chosen)
    return [TopicPartition(t, p) for t, n in sorted(counts.items()) for p in range(n)]


async def unfinished_previous(runtime: Runtime, policy: RetentionPolicy) -> list[str]:
    """The deletions of the policy's latest sweep that made any which are not terminal yet."""
    async with read_session(runtime.sessionmaker) as session:
        return await policy_repo.unfinished_previous_deletions(session, policy.id)


async def submit_cuts(runtime: Runtime, policy: RetentionPolicy, result: SweepResult) -> None:
    """Submit the plan in deletions of at most ``max_partitions`` partitions each."""
    size = runtime.settings.limits.max_partitions
    cuts = sorted(result.plan.deletions.items())
    for start in range(0, len(cuts), size):
        request_id = f"policy-{uuid.uuid4().hex[:16]}"
        command = deletion_command(policy, dict(cuts[start : start + size]))
        submission = await submit_command(runtime, command, request_id=request_id)
        result.deletion_ids.append(submission.deletion.id)
    result.status = "submitted"


def hold_everything(result: SweepResult, partitions: Sequence[TopicPartition], skip: Skip) -> None:
    result.plan.deletions.clear()
    for tp in partitions:
        result.plan.skipped[tp] = skip


def wait_for_approval(result: SweepResult, matched: Sequence[TopicPartition], detail: str) -> None:
    hold_everything(result, matched, Skip(SkipReason.AWAITING_APPROVAL, detail))
    result.status = "waiting"
    result.warnings.append(detail)


async def hold_for_approval(runtime: Runtime, policy: RetentionPolicy, result: SweepResult) -> None:
    """A policy not (yet) approved under a four-eyes rule deletes nothing: every partition it matches is
    skipped (``awaiting_approval``, or the rejection or expiry that ended its approval request)."""
    status = policy.approval_status
    detail = (
        "the policy awaits four-eyes approval"
        if status == "pending"
        else f"the policy's four-eyes approval was {status}: change the policy to ask again"
    )
    matched = await matching_partitions(runtime, policy, rules_of(policy), None)
    result.matched = len(matched)
    wait_for_approval(result, matched, detail)


async def read_sinks_or_fail(
    runtime: Runtime, policy: RetentionPolicy, result: SweepResult
) -> tuple[bool, SinkReading | None]:
    """The policy's Connect sinks; (False, None) with the run failed when Connect cannot be read."""
    if policy.consumers.get("connect") is None:
        return True, None
    try:
        topics = await runtime.gateway.list_topics(policy.cluster)
        return True, await policy_sinks(runtime, policy.consumers, topics)
    except ConnectUnavailable as exc:
        result.error = f"Kafka Connect unreadable, nothing deleted: {exc}"
        return False, None


async def plan_policy(runtime: Runtime, policy: RetentionPolicy, result: SweepResult) -> str | None:
    """Fill ``result.plan``; the owner's refusal when some topic was withheld for it."""
    rules = rules_of(policy)
    readable, sinks = await read_sinks_or_fail(runtime, policy, result)
    if not readable:
        return None
    matched = await matching_partitions(runtime, policy, rules, sinks)
    result.matched = len(matched)
    if await hold_at_sweep(runtime, policy, sorted({tp.topic for tp in matched})):
        detail = "the policy awaits four-eyes approval: it covers a protected topic its last approval did not"
        wait_for_approval(result, matched, detail)
        return None
    partitions, withheld, refusal = await withhold_unauthorized(runtime, policy, matched)
    if partitions:
        view, result.warnings = await collect_view(runtime, policy, rules, partitions, sinks)
        result.plan = plan_sweep(rules, view)
    result.plan.skipped.update(withheld)
    if sinks is not None and sinks.blocked is not None:
        hold_everything(result, matched, Skip(SkipReason.CONNECTOR_TOPICS_UNKNOWN, sinks.blocked))
        result.warnings.append(sinks.blocked)
    return refusal


async def sweep(runtime: Runtime, policy: RetentionPolicy) -> SweepResult:
    """Plan one sweep of ``policy`` and submit its deletions; never raises for Kafka or policy trouble."""
    result = SweepResult(status="failed")
    try:
        if policy.approval_status is not None:
            await hold_for_approval(runtime, policy, result)
            return result
        if policy.await_previous_deletion and (pending := await unfinished_previous(runtime, policy)):
            result.status = "waiting"
            result.warnings.append(f"the previous sweep's deletion(s) {', '.join(pending)} are not finished")
            return result
        refusal = await plan_policy(runtime, policy, result)
        if result.error is not None or result.status == "waiting":
            return result
        if refusal is not None and not result.plan.deletions:
            result.status, result.error = "denied", refusal
            return result
        if not result.plan.deletions:
            result.status = "nothing_to_delete"
            return result
        await submit_cuts(runtime, policy, result)
    except Forbidden as exc:
        result.status, result.error = ("submitted" if result.deletion_ids else "denied"), exc.detail
    except (PurgeError, OSError, ValueError) as exc:
        result.status = "submitted" if result.deletion_ids else "failed"
        result.error = str(exc)
        log.warning("sweep of policy %s/%s failed: %s", policy.cluster, policy.name, exc)
    return result


def now_utc() -> datetime:
    return datetime.now(UTC)
