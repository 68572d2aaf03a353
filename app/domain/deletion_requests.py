"""Deletion requests: the per-partition state machine, and what a request would do (its impact).

    awaiting_approval ──> pending (approved) | cancelled (rejected, expired or cancelled)
    pending ──> in_progress ──> succeeded
       │             │    ├───> leader_truncated ──> succeeded | failed
       │             │    └───> failed
       └──> cancelled (only before the partition was sent)

A deletion of a topic an approval rule protects starts ``awaiting_approval`` (its partitions too): the
executor claims nothing of it. Approved, it is ``approved`` with pending partitions until the executor
claims them (then ``in_progress``); rejected, expired or cancelled, it ends ``rejected``, ``expired`` or
``cancelled`` with every partition cancelled.

``leader_truncated``: the leader's log start offset reached the offset but the low watermark has
not (slow followers, or a LeaderOnly answer); the executor keeps confirming until it does or the
deadline passes. With ``leader_only`` a partition succeeds once the leader truncated.

Impact: what a deletion would do, computed before anything is sent: per partition the records deleted,
the outcome Kafka would give, and every consumer group that has not read all the records being deleted.

A group's *unread* count on a partition is the number of records in ``[max(committed, log start
offset), resolved offset)``: those it has not consumed yet and would never see. A consumer with
``auto.offset.reset=latest`` whose position falls below the new log start offset even jumps to the high
watermark and skips the surviving records too (kafka-semantics §4), so any unread count matters.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:  # annotations only: ``app.domain.ports`` itself names ``PartitionStatus``
    from app.domain.ports import GroupInfo, TopicPartition


class DeletionScope(Protocol):
    """What deciding who may see a deletion needs: who asked, on which cluster, for which topics."""

    @property
    def principal(self) -> str: ...

    @property
    def cluster(self) -> str: ...

    @property
    def topics(self) -> list[str]: ...


class PartitionStatus(StrEnum):
    AWAITING_APPROVAL = "awaiting_approval"
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    LEADER_TRUNCATED = "leader_truncated"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL_PARTITION_STATUSES


class DeletionStatus(StrEnum):
    AWAITING_APPROVAL = "awaiting_approval"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    SUCCEEDED = "succeeded"
    PARTIALLY_FAILED = "partially_failed"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL_PARTITION_STATUSES = frozenset(
    {PartitionStatus.SUCCEEDED, PartitionStatus.FAILED, PartitionStatus.CANCELLED}
)

# A deletion waiting for approval, or approved and not yet claimed: the executor claims no partition of
# a deletion in another status.
CLAIMABLE_DELETION_STATUSES = frozenset(
    {DeletionStatus.PENDING, DeletionStatus.APPROVED, DeletionStatus.IN_PROGRESS}
)

ALLOWED_TRANSITIONS: dict[PartitionStatus, frozenset[PartitionStatus]] = {
    PartitionStatus.AWAITING_APPROVAL: frozenset({PartitionStatus.PENDING, PartitionStatus.CANCELLED}),
    PartitionStatus.PENDING: frozenset(
        {PartitionStatus.IN_PROGRESS, PartitionStatus.CANCELLED, PartitionStatus.FAILED}
    ),
    PartitionStatus.IN_PROGRESS: frozenset(
        {
            PartitionStatus.IN_PROGRESS,
            PartitionStatus.LEADER_TRUNCATED,
            PartitionStatus.SUCCEEDED,
            PartitionStatus.FAILED,
        }
    ),
    PartitionStatus.LEADER_TRUNCATED: frozenset(
        {PartitionStatus.LEADER_TRUNCATED, PartitionStatus.SUCCEEDED, PartitionStatus.FAILED}
    ),
    PartitionStatus.SUCCEEDED: frozenset(),
    PartitionStatus.FAILED: frozenset(),
    PartitionStatus.CANCELLED: frozenset(),
}


class IllegalTransition(ValueError):
    pass


def check_transition(current: PartitionStatus, new: PartitionStatus) -> None:
    if new not in ALLOWED_TRANSITIONS[current]:
        raise IllegalTransition(f"partition cannot go from {current} to {new}")


def overall_status(statuses: Iterable[PartitionStatus]) -> DeletionStatus:
    """The deletion's status, derived from its partitions' statuses."""
    counts = Counter(statuses)
    total = sum(counts.values())
    if total and counts[PartitionStatus.AWAITING_APPROVAL] == total:
        return DeletionStatus.AWAITING_APPROVAL
    if total == 0 or counts[PartitionStatus.PENDING] == total:
        return DeletionStatus.PENDING
    if any(not status.terminal for status in counts):
        return DeletionStatus.IN_PROGRESS
    succeeded, failed = counts[PartitionStatus.SUCCEEDED], counts[PartitionStatus.FAILED]
    if succeeded == total:
        return DeletionStatus.SUCCEEDED
    if failed == total:
        return DeletionStatus.FAILED
    if failed == 0:
        # Cancelled before every partition was sent; the partitions say which ones were deleted.
        return DeletionStatus.CANCELLED
    return DeletionStatus.PARTIALLY_FAILED


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


class GroupImpact(NamedTuple):
    """A named tuple: a preview of 10,000 partitions and 50 groups makes a quarter of a million."""

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


def uncommitted(impact: PartitionImpact, last_stable: int) -> int:
    """Records of transactions still open (from the last stable offset up to the high watermark) that
    the cut removes: ``-1`` and ``end`` reach the high watermark, past the last stable offset."""
    if impact.predicted_outcome != "NONE":
        return 0
    return max(
        0, min(impact.resolved_offset, impact.high_watermark) - max(last_stable, impact.log_start_offset)
    )


def partition_impact(
    tp: TopicPartition,
    resolved: int,
    log_start: int,
    high_watermark: int,
    outcome: str,
    committed: Mapping[str, Mapping[TopicPartition, int]],
    groups: Mapping[str, GroupInfo],
) -> PartitionImpact:
    return partition_impacts([Cut(tp, resolved, log_start, high_watermark, outcome)], committed, groups)[0]


class Cut(NamedTuple):
    partition: TopicPartition
    resolved: int
    log_start: int
    high_watermark: int
    outcome: str


def partition_impacts(
    cuts: Sequence[Cut],
    committed: Mapping[str, Mapping[TopicPartition, int]],
    groups: Mapping[str, GroupInfo],
) -> list[PartitionImpact]:
    """``partition_impact`` of many partitions: one pass per group over the partitions that lose records
    (the figures of ``unread`` inlined: this runs for every partition and group of a preview)."""
    deleted = [
        max(0, min(c.resolved, c.high_watermark) - c.log_start) if c.outcome == "NONE" else 0 for c in cuts
    ]
    losing = [(i, c.partition, c.resolved, c.log_start) for i, c in enumerate(cuts) if deleted[i]]
    affected: list[list[GroupImpact]] = [[] for _ in cuts]
    for group, offsets in committed.items():
        if not offsets:
            continue
        get = offsets.get
        info = groups.get(group)
        state, active = (info.state, info.has_active_members) if info else ("Unknown", False)
        for i, tp, resolved, log_start in losing:
            position = get(tp)
            if position is None:
                continue
            count = resolved - (position if position > log_start else log_start)
            if count > 0:
                affected[i].append(GroupImpact(group, position, count, state, active))
    return [
        PartitionImpact(c.partition, c.resolved, c.log_start, c.high_watermark, d, c.outcome, tuple(a))
        for c, d, a in zip(cuts, deleted, affected, strict=True)
    ]


@dataclass(frozen=True)
class UnconsumedGroup:
    group: str
    unread_records: int
    partitions: int


def unconsumed_groups(impacts: Iterable[PartitionImpact], ignore: Iterable[str]) -> list[UnconsumedGroup]:
    """Per group (except ``ignore``), the records it has not read that the deletion would remove."""
    skipped = set(ignore)
    records: dict[str, int] = {}
    partitions: dict[str, int] = {}
    for impact in impacts:
        for group, _, unread_records, _, _ in impact.groups:  # unpacked: a preview has 250,000
            if group in skipped:
                continue
            records[group] = records.get(group, 0) + unread_records
            partitions[group] = partitions.get(group, 0) + 1
    return [UnconsumedGroup(group, records[group], partitions[group]) for group in sorted(records)]
