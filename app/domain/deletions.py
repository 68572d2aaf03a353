"""Deletion requests and the per-partition state machine.

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
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from enum import StrEnum
from typing import Protocol


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
