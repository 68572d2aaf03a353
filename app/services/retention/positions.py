"""What a sweep reads before it plans: partition offsets, the positions of the policy's consumers (Kafka
groups, Spark queries, Kafka Connect sinks) and, for KIP-762's check, every group's description."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from app.adapters.db.repositories import consumers as consumer_repo
from app.adapters.db.retention_models import RetentionPolicy
from app.adapters.db.session import read_session
from app.domain.connect import SinkReading
from app.domain.consumer_groups import is_spark_source_group
from app.domain.ports import GroupInfo, TopicPartition
from app.domain.positions import Positions
from app.domain.retention import ClusterView, PartitionOffsets, RetentionRules
from app.errors import PurgeError
from app.integrations.spark.checkpoint import CheckpointError, read_committed_offsets
from app.integrations.spark.checkpoint_roots import CheckpointLocationRefused, CheckpointRoots
from app.services.runtime import Runtime


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
) -> tuple[dict[str, Positions], dict[str, str]]:
    answers = await asyncio.gather(*(_one_group(runtime, cluster, g, partitions) for g in groups))
    offsets: dict[str, Positions] = {}
    failed: dict[str, str] = {}
    for group, answer in zip(groups, answers, strict=True):
        if isinstance(answer, Exception):
            failed[f"group:{group}"] = str(answer)
        else:
            offsets[group] = Positions.of(answer)
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
    runtime: Runtime,
    policy: RetentionPolicy,
    rules: RetentionRules,
    partitions: Sequence[TopicPartition],
    sinks: SinkReading | None = None,
) -> tuple[ClusterView, list[str]]:
    """Everything the planner needs; a sink whose group's offsets fail is failed as ``connect:<name>``."""
    cluster, chosen = policy.cluster, rules.consumers
    offsets = await partition_offsets(runtime, cluster, partitions, rules.min_age_seconds)
    groups: list[GroupInfo] = []
    failed: dict[str, str] = {}
    group_names = list(chosen.groups)
    if chosen.all_groups or rules.skip_foreign_active_groups:
        names, groups, failed = await cluster_groups(runtime, cluster)
        if chosen.all_groups:
            group_names = [g for g in names if not is_spark_source_group(g)]
    running = sinks.sinks if sinks is not None else []
    group_names = sorted({*group_names, *(sink.group for sink in running)})
    group_offsets, group_failed = await group_positions(runtime, cluster, group_names, partitions)
    for sink in running:
        if f"group:{sink.group}" in group_failed:
            group_failed[f"connect:{sink.connector}"] = group_failed[f"group:{sink.group}"]
    spark_offsets, spark_failed, warnings = await spark_positions(runtime, cluster, chosen.spark)
    view = ClusterView(
        partitions=offsets,
        group_offsets=group_offsets,
        failed_consumers={**failed, **group_failed, **spark_failed},
        spark_offsets=spark_offsets,
        groups=groups,
        sinks=running,
        held_topics=sinks.held_topics if sinks is not None else {},
    )
    return view, warnings
