"""One sweep of a retention policy: read the cluster and the consumers, plan, submit, record.

The sweep submits a domain ``DeletionCommand`` (``submit_command``), which takes the same path as
``POST /v1/deletions``: same checks, executor, statuses and audit, with ``reason: "policy <name>"``, as
the policy's owner principal, so the owner's right to delete the topics is checked again at every sweep:
first per matched topic (a topic the owner may no longer DELETE on is skipped with
``owner_not_authorized`` and the refusal audited, the other topics are still swept; the run is
``denied`` when that leaves nothing), then by the submission. The planner already bounded every
partition by the policy's consumers, so the command sets ``allow_unconsumed`` and ``consumers_read``:
the submission does not read the cluster's groups again, and groups the policy leaves out were left out
on purpose (with ``all_groups`` none is).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from app.adapters.db.repositories import consumers as consumer_repo
from app.adapters.db.retention_models import RetentionPolicy
from app.adapters.db.session import read_session
from app.auth import Principal
from app.domain.commands import Cut, DeletionCommand
from app.domain.executor import Requester
from app.domain.ports import GroupInfo, TopicPartition
from app.domain.retention import (
    ClusterView,
    ConsumerSelection,
    PartitionOffsets,
    RetentionRules,
    Skip,
    SkipReason,
    SweepPlan,
    TopicSelector,
    is_spark_source_group,
    plan_sweep,
)
from app.errors import Forbidden, PurgeError
from app.integrations.spark.checkpoint import CheckpointError, read_committed_offsets
from app.integrations.spark.checkpoint_roots import CheckpointLocationRefused, CheckpointRoots
from app.services.deletions.submission import submit_command
from app.services.runtime import Runtime

log = logging.getLogger("kafka_purge.retention")

MAX_SKIPPED_LISTED = 100
MAX_WARNINGS = 20


@dataclass
class SweepResult:
    status: str  # submitted, nothing_to_delete, denied, failed
    matched: int = 0
    plan: SweepPlan = field(default_factory=SweepPlan)
    deletion_id: str | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


def rules_of(policy: RetentionPolicy) -> RetentionRules:
    topics = policy.topics
    selector = TopicSelector(
        prefix=topics.get("prefix"), regex=topics.get("regex"), names=tuple(topics.get("names") or ())
    )
    chosen = policy.consumers
    consumers = ConsumerSelection(
        groups=tuple(chosen.get("groups") or ()),
        spark=tuple(chosen.get("spark") or ()),
        all_groups=bool(chosen.get("all_groups")),
    )
    return RetentionRules(selector, consumers, policy.min_age_seconds, policy.min_records)


def owner_principal(policy: RetentionPolicy) -> Principal:
    return Principal(
        user=policy.owner.removeprefix("User:"),
        groups=tuple(policy.owner_groups),
        client_host=policy.owner_host,
    )


async def matching_partitions(
    runtime: Runtime, cluster: str, selector: TopicSelector
) -> list[TopicPartition]:
    topics = list(selector.names) if selector.names else await runtime.gateway.list_topics(cluster)
    counts = await runtime.gateway.topic_partitions(cluster, selector.select(topics))
    return [TopicPartition(t, p) for t, n in sorted(counts.items()) for p in range(n)]


async def partition_offsets(
    runtime: Runtime, cluster: str, partitions: Sequence[TopicPartition], min_age_seconds: int
) -> dict[TopicPartition, PartitionOffsets]:
    gateway = runtime.gateway
    starts, ends = await asyncio.gather(
        gateway.log_start_offsets(cluster, partitions), gateway.high_watermarks(cluster, partitions)
    )
    young: dict[TopicPartition, int] = {}
    if min_age_seconds > 0:
        cut_ms = int(time.time() * 1000) - min_age_seconds * 1000
        found = await gateway.offsets_for_times(cluster, dict.fromkeys(partitions, cut_ms))
        # No record at or after the cut time: every record is old enough.
        young = {tp: (t.offset if t.offset >= 0 else ends[tp]) for tp, t in found.items()}
    return {
        tp: PartitionOffsets(starts[tp], ends[tp], young.get(tp) if min_age_seconds else None)
        for tp in partitions
    }


async def _one_group(runtime: Runtime, cluster: str, group: str, partitions: Sequence[TopicPartition]) -> Any:
    try:
        return (await runtime.gateway.committed_offsets(cluster, [group], partitions)).get(group, {})
    except (PurgeError, OSError) as exc:
        return exc


async def group_positions(
    runtime: Runtime, cluster: str, groups: Sequence[str], partitions: Sequence[TopicPartition]
) -> tuple[dict[str, dict[TopicPartition, int]], dict[str, str]]:
    answers = await asyncio.gather(*(_one_group(runtime, cluster, g, partitions) for g in groups))
    offsets: dict[str, dict[TopicPartition, int]] = {}
    failed: dict[str, str] = {}
    for group, answer in zip(groups, answers, strict=True):
        if isinstance(answer, Exception):
            failed[f"group:{group}"] = str(answer)
        else:
            offsets[group] = dict(answer)
    return offsets, failed


async def cluster_groups(runtime: Runtime, cluster: str) -> tuple[list[str], list[GroupInfo], dict[str, str]]:
    """Every group and its description; on failure ``group:*`` is failed (any group might be a reader)."""
    try:
        names = await runtime.gateway.list_groups(cluster)
        described = await runtime.gateway.describe_groups(cluster, names)
    except (PurgeError, OSError) as exc:
        return [], [], {"group:*": str(exc)}
    return names, list(described.values()), {}


def _merge_checkpoint(
    reported: dict[TopicPartition, int], location: str, roots: CheckpointRoots
) -> dict[TopicPartition, int]:
    """The checkpoint's committed offsets, bounded by what the listener reported (the lower one wins).
    The location is admitted again (real path under a configured root) right before it is read."""
    try:
        admitted = roots.admit(location)
    except CheckpointLocationRefused as exc:
        raise CheckpointError(str(exc)) from None
    committed = read_committed_offsets(admitted).topic_offsets()
    merged = dict(reported)
    for topic, parts in committed.items():
        for partition, offset in parts.items():
            tp = TopicPartition(topic, partition)
            merged[tp] = min(offset, reported.get(tp, offset))
    return merged


async def spark_positions(
    runtime: Runtime, cluster: str, names: Sequence[str]
) -> tuple[dict[str, dict[TopicPartition, int]], dict[str, str], list[str]]:
    async with read_session(runtime.sessionmaker) as session:
        rows = [c for c in await consumer_repo.list_consumers(session, cluster, names) if c.kind == "spark"]
        reported = await consumer_repo.positions(session, [c.id for c in rows])
    offsets: dict[str, dict[TopicPartition, int]] = {}
    failed: dict[str, str] = {}
    for consumer in rows:
        positions = reported.get(consumer.id, {})
        if consumer.checkpoint_location:
            try:
                positions = await asyncio.to_thread(
                    _merge_checkpoint,
                    positions,
                    consumer.checkpoint_location,
                    runtime.settings.spark.roots(),
                )
            except (CheckpointError, OSError) as exc:
                failed[f"spark:{consumer.name}"] = f"checkpoint unreadable: {exc}"
                continue
        offsets[consumer.name] = positions
    known = {c.name for c in rows}
    warnings = [f"Spark consumer {n!r} is not registered on {cluster!r}" for n in names if n not in known]
    return offsets, failed, warnings


async def collect_view(
    runtime: Runtime, policy: RetentionPolicy, rules: RetentionRules, partitions: Sequence[TopicPartition]
) -> tuple[ClusterView, list[str]]:
    cluster, chosen = policy.cluster, rules.consumers
    offsets = await partition_offsets(runtime, cluster, partitions, rules.min_age_seconds)
    groups: list[GroupInfo] = []
    failed: dict[str, str] = {}
    group_names = list(chosen.groups)
    if chosen.all_groups:
        names, groups, failed = await cluster_groups(runtime, cluster)
        group_names = [g for g in names if not is_spark_source_group(g)]
    group_offsets, group_failed = await group_positions(runtime, cluster, group_names, partitions)
    spark_offsets, spark_failed, warnings = await spark_positions(runtime, cluster, chosen.spark)
    view = ClusterView(
        partitions=offsets,
        group_offsets=group_offsets,
        failed_consumers={**failed, **group_failed, **spark_failed},
        spark_offsets=spark_offsets,
        groups=groups,
    )
    return view, warnings


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


async def sweep(runtime: Runtime, policy: RetentionPolicy) -> SweepResult:
    """Plan one sweep of ``policy`` and submit its deletion; never raises for Kafka or policy trouble."""
    result = SweepResult(status="failed")
    try:
        rules = rules_of(policy)
        matched = await matching_partitions(runtime, policy.cluster, rules.topics)
        result.matched = len(matched)
        partitions, withheld, refusal = await withhold_unauthorized(runtime, policy, matched)
        if partitions:
            view, result.warnings = await collect_view(runtime, policy, rules, partitions)
            result.plan = plan_sweep(rules, view)
        result.plan.skipped.update(withheld)
        if refusal is not None and not result.plan.deletions:
            result.status, result.error = "denied", refusal
            return result
        cuts = dict(sorted(result.plan.deletions.items())[: runtime.settings.limits.max_partitions])
        if len(cuts) < len(result.plan.deletions):
            result.warnings.append(
                f"{len(result.plan.deletions) - len(cuts)} partition(s) left for the next sweep"
            )
        if not cuts:
            result.status = "nothing_to_delete"
            return result
        request_id = f"policy-{uuid.uuid4().hex[:16]}"
        submission = await submit_command(runtime, deletion_command(policy, cuts), request_id=request_id)
        result.status, result.deletion_id = "submitted", submission.deletion.id
    except Forbidden as exc:
        result.status, result.error = "denied", exc.detail
    except (PurgeError, OSError, ValueError) as exc:
        result.error = str(exc)
        log.warning("sweep of policy %s/%s failed: %s", policy.cluster, policy.name, exc)
    return result


def now_utc() -> datetime:
    return datetime.now(UTC)
