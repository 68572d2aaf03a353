"""From a request's entries to concrete cuts: expand whole-topic entries, read the facts the specs need,
resolve them (fail closed), and refuse compact-only and internal topics (``plan_checked``).

What the cuts would leave unread by consumer groups is judged in ``app.services.deletions.assessment``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.adapters.db.repositories.deletions import PlannedPartition
from app.domain.deletion_requests import (
    TopicTraits,
    is_compact_only,
)
from app.domain.offsets import (
    Facts,
    PlannedCut,
    Problem,
    SpecEntry,
    above_high_watermark,
    expand,
    needed_facts,
    resolve,
)
from app.domain.ports import TimeOffset, TopicLayout, TopicPartition
from app.errors import (
    FieldError,
    OffsetOutOfRange,
    PurgeError,
    ServiceUnavailable,
    TopicNotFound,
    ValidationFailed,
)
from app.schemas.deletions import entry_specs
from app.services.deletions.request import DeletionRequest
from app.services.runtime import Runtime

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
        resolved, specs = self.resolved, self.specs
        return [
            PlannedPartition(tp, spec.requested_offset, resolved[tp], specs[entry])
            for entry, tp, spec in self.cuts
        ]


def _refuse(
    problems: Sequence[Problem],
    summary: str,
    count_key: str = "problem_count",
    error: type[PurgeError] = ValidationFailed,
    **extra: Any,
) -> PurgeError:
    errors = [FieldError(f"#/partitions/{p.index}", p.message) for p in problems[:MAX_LISTED]]
    return error(summary, errors=errors, **{count_key: len(problems)}, **extra)


def _out_of_range(above: Sequence[Problem]) -> PurgeError:
    """409: the records above a high watermark do not exist yet (Kafka's OFFSET_OUT_OF_RANGE); each
    refused partition listed with the high watermark it was checked against."""
    watermarks = [
        {"topic": p.partition.topic, "partition": p.partition.partition, "high_watermark": p.high_watermark}
        for p in above[:MAX_LISTED]
        if p.partition is not None
    ]
    summary = f"{len(above)} offset(s) are above their partition's high watermark; nothing was accepted."
    return _refuse(above, summary, "above_high_watermark_count", OffsetOutOfRange, high_watermarks=watermarks)


async def _traits(
    runtime: Runtime,
    cluster: str,
    layouts: Mapping[str, TopicLayout],
    *,
    recent: bool = False,
    read: Awaitable[dict[str, dict[str, str]] | None] | None = None,
) -> dict[str, TopicTraits]:
    """Each topic's traits; ``read``: its configs as read with the layouts (read now if it gives None)."""
    topics = sorted(layouts)
    configs = await read if read is not None else None
    if configs is None:
        configs = await runtime.gateway.topic_configs(cluster, topics, [CLEANUP_POLICY], recent=recent)
    traits = {}
    for topic in topics:
        policy = configs.get(topic, {}).get(CLEANUP_POLICY, "delete")
        traits[topic] = TopicTraits(
            internal=layouts[topic].internal, compact_only=is_compact_only(policy), cleanup_policy=policy
        )
    return traits


async def _named_configs(
    runtime: Runtime, cluster: str, topics: Sequence[str], *, recent: bool
) -> dict[str, dict[str, str]] | None:
    """The topics' configs, asked before the metadata says they exist: None when they cannot be read
    (DescribeConfigs fails for a topic that does not exist), to be read again once the topics are known."""
    try:
        return await runtime.gateway.topic_configs(cluster, topics, [CLEANUP_POLICY], recent=recent)
    except ServiceUnavailable:
        return None


async def drop(*tasks: asyncio.Future[Any]) -> None:
    """Cancel the tasks still running and wait for them to end, their outcomes retrieved and discarded."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def empty() -> dict[Any, Any]:
    return {}


async def plan_request(
    runtime: Runtime, request: DeletionRequest, *, recent: bool = False, bounded: bool = False
) -> Plan:
    """Every cut of the request resolved to a concrete offset; 404 listing the topics and partitions the
    cluster does not have, 422 listing what else cannot be resolved.

    ``recent``: topic layouts and configs may come from a recent answer (``app.adapters.kafka.topics``);
    an unknown topic or partition is looked up fresh before it is refused.

    The metadata and the configs need only the topics' names: both are asked at once, and the entries
    are built while the cluster answers. Whatever the configs read says about a topic that does not
    exist, the answer is the 404 listing the unknown partitions.

    ``bounded``: a concrete offset above its partition's current high watermark is a 409 naming the
    partition and its high watermark (Kafka would refuse it with OFFSET_OUT_OF_RANGE). A partition whose
    leader cannot tell it now (a new leader catching up, a topic deleted a moment ago) is left to the
    broker, which checks the offset again when the deletion is sent."""
    cluster, gateway = request.cluster, runtime.gateway
    topics = sorted({entry.topic for entry in request.partitions})
    named = _named_bounds(request) if bounded else []
    reads = _Reads(
        asyncio.ensure_future(gateway.topic_layouts(cluster, topics, recent=recent)),
        asyncio.ensure_future(_named_configs(runtime, cluster, topics, recent=recent)),
        asyncio.ensure_future(gateway.known_high_watermarks(cluster, named) if named else empty()),
        frozenset(named),
    )
    try:
        return await _plan(runtime, request, topics, reads, recent=recent, bounded=bounded)
    finally:
        await drop(reads.layouts, reads.configs, reads.bounds)


@dataclass(frozen=True)
class _Reads:
    """The reads that need only the request (the topics' names, the partitions it names), started
    together: the layouts, the configs, and the high watermarks of the named partitions' concrete
    offsets (``bounded``)."""

    layouts: asyncio.Future[dict[str, TopicLayout]]
    configs: asyncio.Future[dict[str, dict[str, str]] | None]
    bounds: asyncio.Future[dict[TopicPartition, int]]
    bounded: frozenset[TopicPartition]


def _named_bounds(request: DeletionRequest) -> list[TopicPartition]:
    """The partitions the request names with a concrete offset above 0, the only ones a high watermark
    can refuse (whole-topic entries are known only once the layouts are)."""
    return [
        TopicPartition(e.topic, e.partition)
        for e in request.partitions
        if e.partition is not None and e.offset is not None and e.offset > 0
    ]


async def _plan(
    runtime: Runtime,
    request: DeletionRequest,
    topics: list[str],
    reads: _Reads,
    *,
    recent: bool,
    bounded: bool,
) -> Plan:
    cluster, gateway = request.cluster, runtime.gateway
    layouts_read, configs_read = reads.layouts, reads.configs
    # A task sends its request only once the loop runs it: when either read is in, both are out, and
    # the entries are built while the other is answered.
    pending: list[asyncio.Future[Any]] = [layouts_read, configs_read]
    await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
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
        summary = f"{len(unknown)} partition(s) do not exist on cluster {cluster!r}: " + ", ".join(
            p.message.removeprefix("unknown topic or partition ") for p in unknown[:10]
        )
        raise _refuse(unknown, summary + ".", "unknown_count", TopicNotFound)
    if problems:
        raise _refuse(problems, "Each (topic, partition) may appear only once, also through whole topics.")
    if len(cuts) > runtime.settings.limits.max_partitions:
        raise ValidationFailed(
            f"The request names {len(cuts)} partitions; at most {runtime.settings.limits.max_partitions}.",
            errors=[FieldError("#/partitions", "too many partitions after expanding whole topics")],
        )
    needed = needed_facts(cuts, bounded=bounded)
    rest = [tp for tp in needed.bounds if tp not in reads.bounded]
    watermarks, bounds, times, committed, traits = await asyncio.gather(
        gateway.high_watermarks(cluster, needed.high_watermarks) if needed.high_watermarks else empty(),
        gateway.known_high_watermarks(cluster, rest) if rest else empty(),
        gateway.offsets_for_times(cluster, needed.times),
        gateway.committed_offsets(cluster, needed.groups, needed.group_partitions),
        _traits(runtime, cluster, layouts, recent=recent, read=configs_read),
    )
    if above := above_high_watermark(cuts, {**await reads.bounds, **bounds}):
        raise _out_of_range(above)
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


async def plan_checked(runtime: Runtime, request: DeletionRequest) -> Plan:
    """The plan, refused (422) when it touches a compact-only or internal topic."""
    # Whole-topic entries are expanded from fresh metadata: a partition added a moment ago is included.
    recent = all(entry.partition is not None for entry in request.partitions)
    plan = await plan_request(runtime, request, recent=recent, bounded=True)
    if recent and _untouchable(plan):  # a recent policy never refuses on its own: ask again
        plan = replace(plan, traits=await _traits(runtime, request.cluster, plan.layouts))
    refuse_untouchable(plan)
    return plan
