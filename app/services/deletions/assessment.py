"""What a deletion would leave unread, and the guard that refuses it (409) unless allowed.

``plan_deletion`` is what a real deletion stores: the plan (``app.services.deletions.plan``) and, while
it is made, the cluster's consumer groups listed for the guard. The preview, and a deletion held for
approval with its preview, read everything (``assess`` with ``preview=True``); ``frozen_preview`` is that
preview as the request is held with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from app.adapters.db.repositories.deletions import PlannedPartition
from app.domain.deletion_requests import (
    Cut,
    PartitionImpact,
    UnconsumedGroup,
    partition_impacts,
    predict_outcome,
    unconsumed_groups,
)
from app.domain.ports import GroupInfo, TopicPartition
from app.errors import Conflict
from app.services.deletions.plan import Plan, drop, empty, plan_checked
from app.services.deletions.request import DeletionRequest
from app.services.runtime import Runtime

# The groups a 409's problem or a held deletion's preview names at most.
MAX_NAMED_GROUPS = 1000


@dataclass(frozen=True)
class Assessment:
    impacts: list[PartitionImpact]
    groups: dict[str, GroupInfo]
    # Each partition's last stable offset (a preview's only): below the high watermark while a
    # transaction is open.
    last_stable: dict[TopicPartition, int] = field(default_factory=dict)


async def assess(
    runtime: Runtime,
    request: DeletionRequest,
    plan: Plan,
    *,
    preview: bool,
    group_ids: Sequence[str] | None = None,
) -> Assessment:
    """Per partition what would be deleted, the outcome Kafka would give, and the groups left behind.

    For a real deletion only the consumer guard needs this: with no group on the cluster there is
    nothing to read. A preview reads everything, including each broker's DeleteRecords version.
    ``group_ids``: the cluster's groups when the caller has listed them already (in this request).
    """
    cluster, gateway = request.cluster, runtime.gateway
    if group_ids is None:
        group_ids = await gateway.list_groups(cluster)
    if not preview and not group_ids:
        return Assessment([], {})
    leader_only = preview and request.leader_only
    facts = await (_everything if preview else _behind_the_cut)(runtime, request, plan, group_ids)
    if facts is None:
        return Assessment([], {})
    partitions, starts, watermarks, committed, versions, last_stable = facts
    cuts = []
    for tp in partitions:
        placement = plan.layouts[tp.topic].partitions.get(tp.partition)
        outcome = predict_outcome(
            plan.resolved[tp],
            watermarks[tp],
            plan.traits[tp.topic],
            leader_only=leader_only,
            leader_version=versions.get(placement.leader if placement else -1, -1),
        )
        cuts.append(Cut(tp, plan.resolved[tp], starts[tp], watermarks[tp], outcome))
    impacts = partition_impacts(cuts, committed, {})
    groups: dict[str, GroupInfo] = {}
    if preview:
        affected = sorted({g.group for i in impacts for g in i.groups})
        groups = await gateway.describe_groups(cluster, affected) if affected else {}
    return Assessment(impacts, groups, last_stable)


class _Facts(NamedTuple):
    partitions: list[TopicPartition]
    log_starts: dict[TopicPartition, int]
    high_watermarks: dict[TopicPartition, int]
    committed: Mapping[str, Mapping[TopicPartition, int]]
    versions: dict[int, int]
    last_stable: dict[TopicPartition, int]


async def _everything(
    runtime: Runtime, request: DeletionRequest, plan: Plan, group_ids: Sequence[str]
) -> _Facts:
    """A preview's facts: every partition, read at once."""
    cluster, gateway = request.cluster, runtime.gateway
    partitions = [c.partition for c in plan.cuts]
    starts, watermarks, last_stable, committed, versions = await asyncio.gather(
        gateway.log_start_offsets(cluster, partitions),
        gateway.high_watermarks(cluster, partitions),
        gateway.last_stable_offsets(cluster, partitions),
        gateway.committed_offsets(cluster, group_ids, partitions),
        gateway.delete_records_versions(cluster) if request.leader_only else empty(),
    )
    return _Facts(partitions, starts, watermarks, committed, versions, last_stable)


async def _behind_the_cut(
    runtime: Runtime, request: DeletionRequest, plan: Plan, group_ids: Sequence[str]
) -> _Facts | None:
    """The guard's facts: a group loses unread records only where it committed below the cut, so log
    start offsets and high watermarks are read for those partitions alone (usually none: then None)."""
    cluster, gateway = request.cluster, runtime.gateway
    partitions = [c.partition for c in plan.cuts]
    committed = await gateway.committed_offsets(cluster, group_ids, partitions)
    behind = [
        tp
        for tp in partitions
        if any(
            (at := offsets.get(tp)) is not None and at < plan.resolved[tp] for offsets in committed.values()
        )
    ]
    if not behind:
        return None
    starts, watermarks = await asyncio.gather(
        gateway.log_start_offsets(cluster, behind), gateway.high_watermarks(cluster, behind)
    )
    return _Facts(behind, starts, watermarks, committed, {}, {})


def guard_unconsumed(request: DeletionRequest, assessment: Assessment) -> list[UnconsumedGroup]:
    """409 when the deletion removes records a consumer group has not read, unless the request allows it
    (or ignores those groups); returns the groups overridden by ``allow_unconsumed`` for the audit."""
    behind = unconsumed_groups(assessment.impacts, request.ignore_groups)
    if behind and not request.allow_unconsumed:
        shown = ", ".join(f"{g.group} ({g.unread_records} records)" for g in behind[:10])
        raise Conflict(
            f"The deletion would remove records {len(behind)} consumer group(s) have not read yet: {shown}. "
            'Set "allow_unconsumed": true or list the groups in "ignore_groups" to proceed.',
            groups=[
                {"group": g.group, "unread_records": g.unread_records, "partitions": g.partitions}
                for g in behind[:MAX_NAMED_GROUPS]
            ],
        )
    return behind


@dataclass(frozen=True)
class PlannedDeletion:
    """What a real deletion stores: its partitions, the groups whose unread records it removes (accepted
    through ``allow_unconsumed``) and, with ``preview``, every partition's impact."""

    partitions: list[PlannedPartition]
    overridden: list[UnconsumedGroup]
    impacts: list[PartitionImpact]


async def plan_deletion(
    runtime: Runtime, request: DeletionRequest, *, assess_consumers: bool = True, preview: bool = False
) -> PlannedDeletion:
    """What a real deletion stores: its cuts resolved, after the topic and consumer checks.

    The cluster's groups are listed while the plan is made (one round trip less per request); the
    committed offsets the guard compares against are still read after both, at accept time. Without
    ``assess_consumers`` (the caller bounded the cuts by the consumers it read) no group is read.
    ``preview``: everything a preview reads is read too (``assess``), for the preview a protected
    deletion is held with.
    """
    if not assess_consumers:
        return PlannedDeletion((await plan_checked(runtime, request)).partitions(), [], [])
    listing = asyncio.ensure_future(runtime.gateway.list_groups(request.cluster))
    try:
        plan = await plan_checked(runtime, request)
    except BaseException:
        # The request's own answer (404, 422) wins over whatever the listing would have said.
        await drop(listing)
        raise
    assessment = await assess(runtime, request, plan, preview=preview, group_ids=await listing)
    overridden = guard_unconsumed(request, assessment)
    return PlannedDeletion(plan.partitions(), overridden, assessment.impacts)


def frozen_preview(planned: PlannedDeletion) -> dict[str, Any]:
    """The preview a protected deletion is held with: what ``"dry_run": true`` shows for the same request,
    from the same facts the stored offsets come from. Per partition the resolved offset (what will be
    sent), the log start offset and high watermark when it was asked, the records that go, and every
    consumer group that has not read them."""
    by_partition = {impact.partition: impact for impact in planned.impacts}
    partitions = []
    for p in planned.partitions:
        impact = by_partition.get(p.partition)
        partitions.append(
            {
                "topic": p.partition.topic,
                "partition": p.partition.partition,
                "resolved_offset": p.resolved_offset,
                "log_start_offset": impact.log_start_offset if impact else None,
                "high_watermark": impact.high_watermark if impact else None,
                "records_deleted": impact.records_deleted if impact else None,
                "unconsumed_groups": [
                    {
                        "group": g.group,
                        "committed_offset": g.committed_offset,
                        "unread_records": g.unread_records,
                    }
                    for g in (impact.groups if impact else ())
                ],
            }
        )
    groups = unconsumed_groups(planned.impacts, ())
    return {
        "records_deleted": sum(i.records_deleted for i in planned.impacts),
        "partitions": partitions,
        "unconsumed_groups": [
            {"group": g.group, "unread_records": g.unread_records, "partitions": g.partitions}
            for g in groups[:MAX_NAMED_GROUPS]
        ],
    }
