"""Offset specs: saying where to cut the way people think, resolved to concrete offsets at accept time.

An entry of a deletion request carries exactly one spec:

- ``offset``: a concrete offset, -1 meaning the high watermark (as Kafka's ``beforeOffset(-1)``);
- ``before``: a time (epoch ms); ListOffsets by timestamp gives the first record at or after it. When no
  record is at or after that time every record is older, so the cut is the high watermark;
- ``committed_by``: the minimum committed offset of these consumer groups. A group without a commit on
  the partition makes it unresolvable: fail closed, never guess;
- ``to_end``: the high watermark.

Whole-topic entries (no partition) expand to every partition of the topic. Resolution is pure: the
caller reads the facts from Kafka (``needed_facts`` says which) and hands them in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from app.domain.ports import TimeOffset, TopicPartition

HIGH_WATERMARK = -1


@dataclass(frozen=True)
class OffsetSpec:
    """Exactly one of the four ways to name a cut."""

    offset: int | None = None
    before_ms: int | None = None
    committed_by: tuple[str, ...] = ()
    to_end: bool = False

    def __post_init__(self) -> None:
        chosen = [self.offset is not None, self.before_ms is not None, bool(self.committed_by), self.to_end]
        if sum(chosen) != 1:
            raise ValueError("an offset spec has exactly one of offset, before, committed_by, to")

    def as_json(self) -> dict[str, object]:
        if self.offset is not None:
            return {"offset": self.offset}
        if self.before_ms is not None:
            return {"before_ms": self.before_ms}
        if self.committed_by:
            return {"committed_by": list(self.committed_by)}
        return {"to": "end"}

    @property
    def requested_offset(self) -> int:
        """The offset column kept from issue 3: the literal offset, or -1 (resolved from a spec)."""
        return self.offset if self.offset is not None else HIGH_WATERMARK


# Named tuples, like ``TopicPartition``: a request builds 10,000 of each, and a tuple is built in C.
class SpecEntry(NamedTuple):
    position: int  # in the request, for error pointers
    topic: str
    partition: int | None  # None: every partition of the topic
    spec: OffsetSpec


class PlannedCut(NamedTuple):
    entry: int  # the request entry it came from
    partition: TopicPartition
    spec: OffsetSpec


@dataclass(frozen=True)
class Problem:
    index: int
    message: str
    unknown: bool = False  # names a topic or partition that does not exist
    partition: TopicPartition | None = None  # an offset above its high watermark: the partition
    high_watermark: int | None = None  # and its high watermark


def expand(
    entries: Sequence[SpecEntry], partition_counts: Mapping[str, int]
) -> tuple[list[PlannedCut], list[Problem]]:
    """Concrete partitions for each entry; unknown topics/partitions and duplicates are problems."""
    cuts: list[PlannedCut] = []
    problems: list[Problem] = []
    seen: dict[TopicPartition, int] = {}
    for position, topic, partition, spec in entries:
        count = partition_counts.get(topic)
        if count is None or (partition is not None and partition >= count):
            where = topic if partition is None else f"{topic}-{partition}"
            problems.append(Problem(position, f"unknown topic or partition {where}", unknown=True))
            continue
        for number in range(count) if partition is None else (partition,):
            tp = TopicPartition(topic, number)
            if tp in seen:
                problems.append(Problem(position, f"{tp} is also named by entry {seen[tp]}"))
                continue
            seen[tp] = position
            cuts.append(PlannedCut(position, tp, spec))
    return cuts, problems


@dataclass(frozen=True)
class NeededFacts:
    high_watermarks: list[TopicPartition] = field(default_factory=list)
    bounds: list[TopicPartition] = field(default_factory=list)
    times: dict[TopicPartition, int] = field(default_factory=dict)
    groups: list[str] = field(default_factory=list)
    group_partitions: list[TopicPartition] = field(default_factory=list)


def needed_facts(cuts: Sequence[PlannedCut], *, bounded: bool = False) -> NeededFacts:
    """What the cluster must tell to resolve ``cuts``; ``bounded``: also the partitions of concrete
    offsets (``bounds``), whose high watermarks refuse an offset above them (``above_high_watermark``)."""
    needed = NeededFacts()
    groups: set[str] = set()
    for cut in cuts:
        spec = cut.spec
        if spec.before_ms is not None:
            needed.times[cut.partition] = spec.before_ms
        if spec.committed_by:
            groups.update(spec.committed_by)
            needed.group_partitions.append(cut.partition)
        if spec.to_end or spec.offset == HIGH_WATERMARK or spec.before_ms is not None:
            needed.high_watermarks.append(cut.partition)
        elif bounded and spec.offset is not None and spec.offset > 0:  # 0 is never above a high watermark
            needed.bounds.append(cut.partition)
    needed.groups.extend(sorted(groups))
    return needed


@dataclass(frozen=True)
class Facts:
    high_watermarks: Mapping[TopicPartition, int]
    times: Mapping[TopicPartition, TimeOffset]
    committed: Mapping[str, Mapping[TopicPartition, int]]


def resolve_one(cut: PlannedCut, facts: Facts) -> int | str:
    """The concrete offset of one cut, or why it cannot be resolved."""
    spec, tp = cut.spec, cut.partition
    if spec.offset is not None and spec.offset != HIGH_WATERMARK:
        return spec.offset
    if spec.before_ms is not None:
        found = facts.times[tp].offset
        return found if found >= 0 else facts.high_watermarks[tp]
    if spec.committed_by:
        missing = [g for g in spec.committed_by if tp not in facts.committed.get(g, {})]
        if missing:
            return f"group(s) {', '.join(missing)} have no committed offset on {tp}"
        return min(facts.committed[g][tp] for g in spec.committed_by)
    return facts.high_watermarks[tp]


def above_high_watermark(
    cuts: Sequence[PlannedCut], watermarks: Mapping[TopicPartition, int]
) -> list[Problem]:
    """Concrete offsets above their partition's high watermark (where ``watermarks`` has it): Kafka would
    answer OFFSET_OUT_OF_RANGE, so they are refused before anything is stored."""
    problems = []
    for cut in cuts:
        offset, tp = cut.spec.offset, cut.partition
        if offset is not None and offset != HIGH_WATERMARK and tp in watermarks and offset > watermarks[tp]:
            problems.append(
                Problem(
                    cut.entry,
                    f"offset {offset} is above the high watermark {watermarks[tp]} of {tp}",
                    partition=tp,
                    high_watermark=watermarks[tp],
                )
            )
    return problems


def resolve(cuts: Sequence[PlannedCut], facts: Facts) -> tuple[dict[TopicPartition, int], list[Problem]]:
    resolved: dict[TopicPartition, int] = {}
    problems: list[Problem] = []
    for cut in cuts:
        answer = resolve_one(cut, facts)
        if isinstance(answer, str):
            problems.append(Problem(cut.entry, answer))
        else:
            resolved[cut.partition] = answer
    return resolved, problems
