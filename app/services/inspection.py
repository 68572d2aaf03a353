"""Inspection: a topic's offsets with its consumer groups' lag, and the erasure evidence of a deletion."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime

from app.adapters.db.models import AuditEvent
from app.adapters.db.repositories import evidence as repo
from app.adapters.db.session import read_session
from app.auth import Principal
from app.domain.ports import TopicPartition
from app.errors import ClusterNotFound, NotFound, ServiceUnavailable
from app.schemas.inspection import (
    AuditPosition,
    DeletionEvidence,
    GroupOffsetRead,
    PartitionEvidence,
    PartitionOffsetsRead,
    TopicGroupRead,
    TopicOffsetsRead,
)
from app.services.deletions.visibility import visible_deletion
from app.services.runtime import Runtime

PHYSICAL_NOTE = (
    "A deletion is logical: the broker's log start offset moves at once and reads below it fail, but the "
    "segment files holding the deleted records are removed later by the broker's log retention task "
    "(log.retention.check.interval.ms), once a whole segment lies below the log start offset."
)


async def topic_offsets(
    runtime: Runtime, principal: Principal, cluster: str, topic: str, *, request_id: str
) -> TopicOffsetsRead:
    """Per partition leader, replicas, log start offset, high watermark, and each group's offset and lag."""
    gateway = runtime.gateway
    if not gateway.has_cluster(cluster):
        raise ClusterNotFound(f"Unknown cluster {cluster!r}.")
    await runtime.authorization.check_describe_topics(principal, cluster, [topic], request_id=request_id)
    layouts = await gateway.topic_layouts(cluster, [topic])
    if topic not in layouts:
        raise NotFound(f"No topic {topic!r} on cluster {cluster!r}.")
    layout = layouts[topic]
    partitions = [TopicPartition(topic, p) for p in sorted(layout.partitions)]
    configs, starts, ends, group_ids = await asyncio.gather(
        gateway.topic_configs(cluster, [topic], ["cleanup.policy"]),
        gateway.log_start_offsets(cluster, partitions),
        gateway.high_watermarks(cluster, partitions),
        gateway.list_groups(cluster),
    )
    committed = await gateway.committed_offsets(cluster, group_ids, partitions)
    readers = sorted(g for g, offsets in committed.items() if offsets)
    infos = await gateway.describe_groups(cluster, readers) if readers else {}
    lag: Counter[str] = Counter()
    rows = []
    for tp in partitions:
        placement = layout.partitions[tp.partition]
        offsets = []
        for group in readers:
            if (position := committed[group].get(tp)) is not None:
                behind = max(0, ends[tp] - max(position, starts[tp]))
                lag[group] += behind
                offsets.append(GroupOffsetRead(group=group, committed_offset=position, lag=behind))
        rows.append(
            PartitionOffsetsRead(
                partition=tp.partition,
                leader=placement.leader,
                replicas=list(placement.replicas),
                log_start_offset=starts[tp],
                high_watermark=ends[tp],
                groups=offsets,
            )
        )
    return TopicOffsetsRead(
        cluster=cluster,
        topic=topic,
        internal=layout.internal,
        cleanup_policy=configs.get(topic, {}).get("cleanup.policy", "delete"),
        partitions=rows,
        groups=[
            TopicGroupRead(
                group=g,
                state=infos[g].state if g in infos else "Unknown",
                has_active_members=infos[g].has_active_members if g in infos else False,
                total_lag=lag[g],
            )
            for g in readers
        ],
    )


def _position(event: AuditEvent | None) -> AuditPosition | None:
    return AuditPosition(event_id=event.id, hash=event.hash, action=event.action) if event else None


async def deletion_evidence(runtime: Runtime, principal: Principal, deletion_id: str) -> DeletionEvidence:
    """Whether each partition's records are gone now (the leader's log start offset), with audit anchors."""
    async with read_session(runtime.sessionmaker) as session:
        deletion = await visible_deletion(session, runtime.authorization, principal, deletion_id)
        rows = await repo.all_partitions(session, deletion.id)
        requested = await repo.first_event(session, deletion.id, "deletion.requested")
        completed = await repo.first_event(session, deletion.id, "deletion.completed")
    tps = [TopicPartition(r.topic, r.partition) for r in rows]
    try:
        starts: dict[TopicPartition, int] = await runtime.gateway.log_start_offsets(deletion.cluster, tps)
    except ServiceUnavailable:
        starts = {}
    partitions = []
    for row, tp in zip(rows, tps, strict=True):
        start = starts.get(tp)
        verdict = "unknown" if start is None else "deleted" if start >= row.resolved_offset else "not_deleted"
        partitions.append(
            PartitionEvidence(
                topic=row.topic,
                partition=row.partition,
                status=row.status,
                resolved_offset=row.resolved_offset,
                log_start_offset=start,
                verdict=verdict,
            )
        )
    return DeletionEvidence(
        deletion_id=deletion.id,
        cluster=deletion.cluster,
        status=deletion.status,
        checked_at=datetime.now(UTC).isoformat(),
        partitions=partitions,
        verdicts=dict(Counter(p.verdict for p in partitions)),
        requested_event=_position(requested),
        completed_event=_position(completed),
        note=PHYSICAL_NOTE,
    )
