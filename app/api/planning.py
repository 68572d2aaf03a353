"""From a request's entries to concrete cuts: expand whole-topic entries, read the facts the specs need,
resolve them (fail closed), and judge what the deletion would do to topics and consumer groups.

Used by accepting (``plan_deletion``: refuses compact-only and internal topics, and deletions of records
some consumer group has not read unless allowed) and by the preview (``assess``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from app.adapters.db.repositories.deletions import PlannedPartition
from app.api.deps import Services
from app.domain.impact import (
    Cut,
    PartitionImpact,
    TopicTraits,
    UnconsumedGroup,
    is_compact_only,
    partition_impacts,
    predict_outcome,
    unconsumed_groups,
)
from app.domain.offsets import Facts, PlannedCut, Problem, SpecEntry, expand, needed_facts, resolve
from app.domain.ports import GroupInfo, TimeOffset, TopicLayout, TopicPartition
from app.errors import Conflict, FieldError, ServiceUnavailable, ValidationFailed
from app.schemas.deletions import DeletionCreate
from app.schemas.specs import entry_specs

MAX_LISTED = 50
CLEANUP_POLICY = "cleanup.policy"


@dataclass(frozen=True)
class Plan:
    cuts: list[PlannedCut]
    resolved: dict[TopicPartition, int]
    specs: list[dict[str, object]]  # stored spec per request entry
    traits: dict[str, TopicTraits]
    times: dict[TopicPartition, TimeOffset]
    layouts: dict[str, TopicLayout]

    def partitions(self) -> list[PlannedPartition]:
        resolved, specs, new = self.resolved, self.specs, tuple.__new__  # (named tuples built in C)
        return [
            new(PlannedPartition, (tp, spec.requested_offset, resolved[tp], specs[entry]))
            for entry, tp, spec in self.cuts
        ]


def _refuse(problems: Sequence[Problem], summary: str, count_key: str = "problem_count") -> ValidationFailed:
    errors = [FieldError(f"#/partitions/{p.index}", p.message) for p in problems[:MAX_LISTED]]
    return ValidationFailed(summary, errors=errors, **{count_key: len(problems)})


async def _traits(
    services: Services,
    cluster: str,
    layouts: Mapping[str, TopicLayout],
    *,
    recent: bool = False,
    early: Awaitable[dict[str, dict[str, str]] | None] | None = None,
) -> dict[str, TopicTraits]:
    """Each topic's traits; ``early``: its configs as read with the layouts (read now if it gives None)."""
    topics = sorted(layouts)
    configs = await early if early is not None else None
    if configs is None:
        configs = await services.gateway.topic_configs(cluster, topics, [CLEANUP_POLICY], recent=recent)
    traits = {}
    for topic in topics:
        policy = configs.get(topic, {}).get(CLEANUP_POLICY, "delete")
        traits[topic] = TopicTraits(
            internal=layouts[topic].internal, compact_only=is_compact_only(policy), cleanup_policy=policy
        )
    return traits


async def _early_configs(
    services: Services, cluster: str, topics: Sequence[str], *, recent: bool
) -> dict[str, dict[str, str]] | None:
    """The topics' configs, asked before the metadata says they exist: None when they cannot be read
    (DescribeConfigs fails for a topic that does not exist), to be read again once the topics are known."""
    try:
        return await services.gateway.topic_configs(cluster, topics, [CLEANUP_POLICY], recent=recent)
    except ServiceUnavailable:
        return None


async def _drop(*tasks: asyncio.Future[Any]) -> None:
    """Cancel the tasks still running and wait for them to end, their outcomes retrieved and discarded."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _empty() -> dict[Any, Any]:
    return {}


async def plan_request(services: Services, request: DeletionCreate, *, recent: bool = False) -> Plan:
    """Every cut of the request resolved to a concrete offset; 422 listing what cannot be.

    ``recent``: topic layouts and configs may come from a recent answer (``app.adapters.kafka.recent``);
    an unknown topic or partition is looked up fresh before it is refused.

    The metadata and the configs need only the topics' names: both are asked at once, and the entries
    are built while the cluster answers. Whatever the configs read says about a topic that does not
    exist, the answer is the 422 listing the unknown partitions."""
    cluster, gateway = request.cluster, services.gateway
    topics = sorted({entry.topic for entry in request.partitions})
    layouts_read = asyncio.ensure_future(gateway.topic_layouts(cluster, topics, recent=recent))
    configs_read = asyncio.ensure_future(_early_configs(services, cluster, topics, recent=recent))
    try:
        return await _plan(services, request, topics, layouts_read, configs_read, recent=recent)
    finally:
        await _drop(layouts_read, configs_read)


async def _plan(
    services: Services,
    request: DeletionCreate,
    topics: list[str],
    layouts_read: asyncio.Future[dict[str, TopicLayout]],
    configs_read: asyncio.Future[dict[str, dict[str, str]] | None],
    *,
    recent: bool,
) -> Plan:
    cluster, gateway = request.cluster, services.gateway
    # A task sends its request only once the loop runs it: when either read is in, both are out, and
    # the entries are built while the other is answered.
    reads: list[asyncio.Future[Any]] = [layouts_read, configs_read]
    await asyncio.wait(reads, return_when=asyncio.FIRST_COMPLETED)
    specs, stored = entry_specs(request.partitions)
    entries = [
        SpecEntry(i, e.topic, e.partition, spec)
        for i, (e, spec) in enumerate(zip(request.partitions, specs, strict=True))
    ]
    layouts = await layouts_read
    cuts, problems = expand(entries, {name: len(layout.partitions) for name, layout in layouts.items()})
    if recent and any(p.unknown for p in problems):
        layouts = await gateway.topic_layouts(cluster, topics)
        cuts, problems = expand(entries, {name: len(layout.partitions) for name, layout in layouts.items()})
    if unknown := [p for p in problems if p.unknown]:
        summary = f"{len(unknown)} partition(s) do not exist on cluster {cluster!r}."
        raise _refuse(unknown, summary, "unknown_count")
    if problems:
        raise _refuse(problems, "Each (topic, partition) may appear only once, also through whole topics.")
    if len(cuts) > services.settings.limits.max_partitions:
        raise ValidationFailed(
            f"The request names {len(cuts)} partitions; at most {services.settings.limits.max_partitions}.",
            errors=[FieldError("#/partitions", "too many partitions after expanding whole topics")],
        )
    needed = needed_facts(cuts)
    watermarks, times, committed, traits = await asyncio.gather(
        gateway.high_watermarks(cluster, needed.high_watermarks) if needed.high_watermarks else _empty(),
        gateway.offsets_for_times(cluster, needed.times),
        gateway.committed_offsets(cluster, needed.groups, needed.group_partitions),
        _traits(services, cluster, layouts, recent=recent, early=configs_read),
    )
    resolved, problems = resolve(cuts, Facts(watermarks, times, committed))
    if problems:
        raise _refuse(
            problems, f"{len(problems)} partition(s) cannot be resolved to an offset; nothing was accepted."
        )
    return Plan(cuts, resolved, stored, traits, times, layouts)


def refuse_untouchable(plan: Plan) -> None:
    """Compact-only and internal topics would only fail later at the broker: refuse them now."""
    if problems := _untouchable(plan):
        unique = list({p.index: p for p in problems}.values())
        raise _refuse(unique, "Compact-only or internal topics cannot have records deleted.")


def _untouchable(plan: Plan) -> list[Problem]:
    problems = []
    for cut in plan.cuts:
        traits = plan.traits[cut.partition.topic]
        if traits.internal:
            problems.append(
                Problem(cut.entry, f"{cut.partition.topic} is an internal topic; Kafka refuses it")
            )
        elif traits.compact_only:
            problems.append(
                Problem(
                    cut.entry,
                    f"{cut.partition.topic} has cleanup.policy={traits.cleanup_policy}; Kafka deletes "
                    "records only when the policy includes delete (POLICY_VIOLATION)",
                )
            )
    return problems


@dataclass(frozen=True)
class Assessment:
    impacts: list[PartitionImpact]
    groups: dict[str, GroupInfo]


async def assess(
    services: Services,
    request: DeletionCreate,
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
    cluster, gateway = request.cluster, services.gateway
    if group_ids is None:
        group_ids = await gateway.list_groups(cluster)
    if not preview and not group_ids:
        return Assessment([], {})
    leader_only = preview and request.leader_only
    facts = await (_everything if preview else _behind_the_cut)(services, request, plan, group_ids)
    if facts is None:
        return Assessment([], {})
    partitions, starts, watermarks, committed, versions = facts
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
    return Assessment(impacts, groups)


class _Facts(NamedTuple):
    partitions: list[TopicPartition]
    log_starts: dict[TopicPartition, int]
    high_watermarks: dict[TopicPartition, int]
    committed: dict[str, dict[TopicPartition, int]]
    versions: dict[int, int]


async def _everything(
    services: Services, request: DeletionCreate, plan: Plan, group_ids: Sequence[str]
) -> _Facts:
    """A preview's facts: every partition, read at once."""
    cluster, gateway = request.cluster, services.gateway
    partitions = [c.partition for c in plan.cuts]
    starts, watermarks, committed, versions = await asyncio.gather(
        gateway.log_start_offsets(cluster, partitions),
        gateway.high_watermarks(cluster, partitions),
        gateway.committed_offsets(cluster, group_ids, partitions),
        gateway.delete_records_versions(cluster) if request.leader_only else _empty(),
    )
    return _Facts(partitions, starts, watermarks, committed, versions)


async def _behind_the_cut(
    services: Services, request: DeletionCreate, plan: Plan, group_ids: Sequence[str]
) -> _Facts | None:
    """The guard's facts: a group loses unread records only where it committed below the cut, so log
    start offsets and high watermarks are read for those partitions alone (usually none: then None)."""
    cluster, gateway = request.cluster, services.gateway
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
    return _Facts(behind, starts, watermarks, committed, {})


def guard_unconsumed(request: DeletionCreate, assessment: Assessment) -> list[UnconsumedGroup]:
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
                for g in behind[:1000]
            ],
        )
    return behind


def predicted_partitions(request: DeletionCreate) -> list[PlannedPartition] | None:
    """What ``plan_deletion`` returns for ``request`` if the cluster accepts it, known without asking the
    cluster when every entry names a partition and a concrete offset (the offset is then the cut); None
    otherwise. Lets a large deletion be written while it is still being checked (``app.api.accepting``)."""
    _, stored = entry_specs(request.partitions)
    planned = []
    new = tuple.__new__  # named tuples built in C
    for entry, spec in zip(request.partitions, stored, strict=True):
        partition, offset = entry.partition, entry.offset
        if partition is None or offset is None or offset < 0:
            return None
        planned.append(
            new(PlannedPartition, (new(TopicPartition, (entry.topic, partition)), offset, offset, spec))
        )
    return planned


async def plan_deletion(
    services: Services, request: DeletionCreate
) -> tuple[list[PlannedPartition], list[UnconsumedGroup]]:
    """What a real deletion stores: its cuts resolved, after the topic and consumer checks.

    The cluster's groups are listed while the plan is made (one round trip less per request); the
    committed offsets the guard compares against are still read after both, at accept time.
    """
    listing = asyncio.ensure_future(services.gateway.list_groups(request.cluster))
    # Whole-topic entries are expanded from fresh metadata: a partition added a moment ago is included.
    recent = all(entry.partition is not None for entry in request.partitions)
    try:
        plan = await plan_request(services, request, recent=recent)
        if recent and _untouchable(plan):  # a recent policy never refuses on its own: ask again
            plan = replace(plan, traits=await _traits(services, request.cluster, plan.layouts))
        refuse_untouchable(plan)
    except BaseException:
        # The request's own answer (404, 422) wins over whatever the listing would have said.
        await _drop(listing)
        raise
    assessment = await assess(services, request, plan, preview=False, group_ids=await listing)
    overridden = guard_unconsumed(request, assessment)
    return plan.partitions(), overridden
