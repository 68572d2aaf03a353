"""What a deletion would do, computed before anything is sent: per partition the records deleted, the
outcome Kafka would give, and every consumer group that has not read all the records being deleted.

A group's *unread* count on a partition is the number of records in ``[max(committed, log start
offset), resolved offset)``: those it has not consumed yet and would never see. A consumer with
``auto.offset.reset=latest`` whose position falls below the new log start offset even jumps to the high
watermark and skips the surviving records too (kafka-semantics §4), so any unread count matters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from app.domain.ports import GroupInfo, TopicPartition

LEADER_ONLY_VERSION = 3


def is_compact_only(cleanup_policy: str | None) -> bool:
    """``compact`` without ``delete``: the broker refuses DeleteRecords with POLICY_VIOLATION."""
    policies = {p.strip() for p in (cleanup_policy or "delete").split(",")}
    return "compact" in policies and "delete" not in policies


@dataclass(frozen=True)
class TopicTraits:
    internal: bool
    compact_only: bool
    cleanup_policy: str


def predict_outcome(
    resolved: int, high_watermark: int, traits: TopicTraits, *, leader_only: bool, leader_version: int
) -> str:
    """The error name Kafka would answer with (``NONE`` for success), checked in the broker's order."""
    if traits.internal:
        return "INVALID_TOPIC_EXCEPTION"
    if leader_only and leader_version < LEADER_ONLY_VERSION:
        return "UNSUPPORTED_VERSION"
    if traits.compact_only:
        return "POLICY_VIOLATION"
    if resolved > high_watermark:
        return "OFFSET_OUT_OF_RANGE"
    return "NONE"


@dataclass(frozen=True)
class GroupImpact:
    group: str
    committed_offset: int
    unread_records: int
    state: str
    has_active_members: bool


@dataclass(frozen=True)
class PartitionImpact:
    partition: TopicPartition
    resolved_offset: int
    log_start_offset: int
    high_watermark: int
    records_deleted: int
    predicted_outcome: str
    groups: tuple[GroupImpact, ...]


def unread(resolved: int, log_start: int, committed: int) -> int:
    return max(0, resolved - max(committed, log_start))


def partition_impact(
    tp: TopicPartition,
    resolved: int,
    log_start: int,
    high_watermark: int,
    outcome: str,
    committed: Mapping[str, Mapping[TopicPartition, int]],
    groups: Mapping[str, GroupInfo],
) -> PartitionImpact:
    deleted = max(0, min(resolved, high_watermark) - log_start) if outcome == "NONE" else 0
    affected: list[GroupImpact] = []
    if deleted:
        for group, offsets in committed.items():
            position = offsets.get(tp)
            if position is None or (count := unread(resolved, log_start, position)) == 0:
                continue
            info = groups.get(group)
            affected.append(
                GroupImpact(
                    group=group,
                    committed_offset=position,
                    unread_records=count,
                    state=info.state if info else "Unknown",
                    has_active_members=info.has_active_members if info else False,
                )
            )
    return PartitionImpact(tp, resolved, log_start, high_watermark, deleted, outcome, tuple(affected))


@dataclass(frozen=True)
class UnconsumedGroup:
    group: str
    unread_records: int
    partitions: int


def unconsumed_groups(impacts: Iterable[PartitionImpact], ignore: Iterable[str]) -> list[UnconsumedGroup]:
    """Per group (except ``ignore``), the records it has not read that the deletion would remove."""
    skipped = set(ignore)
    totals: dict[str, list[int]] = {}
    for impact in impacts:
        for g in impact.groups:
            if g.group in skipped:
                continue
            total = totals.setdefault(g.group, [0, 0])
            total[0] += g.unread_records
            total[1] += 1
    return [UnconsumedGroup(group, records, parts) for group, (records, parts) in sorted(totals.items())]
