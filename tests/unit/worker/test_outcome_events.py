"""The audit events the write-back appends (``app.worker.outcomes``): who writes them and what their
details hold."""

from __future__ import annotations

from datetime import UTC, datetime

from helpers.claims import claim

from app.adapters.db.repositories.write_back import PartitionUpdate
from app.audit import events, rendered
from app.audit.events import EXECUTOR_PRINCIPAL
from app.domain.deletion_requests import DeletionStatus, PartitionStatus
from app.worker.outcomes import failure_events

NOW = datetime(2026, 11, 25, tzinfo=UTC)
OWNER = "executor_vm:1:abc"
CLAIM = claim(NOW, id=7, deletion_id="d1", topic="orders", partition=3, fence=2, attempts=4, request_id="r1")


def _update(status: PartitionStatus, code: str | None = None) -> PartitionUpdate:
    return PartitionUpdate(CLAIM.id, CLAIM.fence, status, 5, 6, code, "compacted" if code else None, NOW)


def test_a_failed_partition_is_audited_with_its_claim_and_answer() -> None:
    event = events.deletion_partition_failed(
        CLAIM, _update(PartitionStatus.FAILED, "POLICY_VIOLATION"), OWNER
    )
    assert (event.action, event.principal, event.request_id) == (
        "deletion.partition_failed",
        EXECUTOR_PRINCIPAL,
        "r1",
    )
    assert (event.cluster, event.deletion_id) == ("demo", "d1")
    assert event.details == {
        "topic": "orders",
        "partition": 3,
        "resolved_offset": 10,
        "error_code": "POLICY_VIOLATION",
        "error_message": "compacted",
        "low_watermark": 5,
        "leader_log_start_offset": 6,
        "attempts": 4,
        "worker": OWNER,
        "fence": 2,
    }


def test_only_failed_partitions_are_audited_one_by_one() -> None:
    updates = [
        _update(PartitionStatus.SUCCEEDED),
        _update(PartitionStatus.FAILED, "POLICY_VIOLATION"),
        _update(PartitionStatus.LEADER_TRUNCATED, "REQUEST_TIMED_OUT"),
        _update(PartitionStatus.FAILED, "TOPIC_AUTHORIZATION_FAILED")._replace(id=8),
    ]
    claims = {7: CLAIM, 8: CLAIM._replace(id=8, partition=4)}
    found = failure_events(updates, claims, OWNER)
    assert [(e.details["partition"], e.details["error_code"]) for e in found] == [
        (3, "POLICY_VIOLATION"),
        (4, "TOPIC_AUTHORIZATION_FAILED"),
    ]


def test_the_completion_lists_status_counts_and_every_partition_column_by_column() -> None:
    outcomes = {
        "topic": ["B", "a"],
        "partition": [0, 0],
        "resolved_offset": [3, 4],
        "status": ["failed", "succeeded"],
        "low_watermark": [None, 4],
        "leader_log_start_offset": [None, 4],
        "error_code": ["POLICY_VIOLATION", None],
        "attempts": [1, 2],
        "fence": [1, 2],
        "worker": [OWNER, "other"],
    }
    counts = {PartitionStatus.SUCCEEDED: 1, PartitionStatus.FAILED: 1}
    event = events.deletion_completed(CLAIM, DeletionStatus.PARTIALLY_FAILED, counts, outcomes, OWNER)
    assert (event.action, event.principal, event.request_id, event.deletion_id) == (
        "deletion.completed",
        EXECUTOR_PRINCIPAL,
        "r1",
        "d1",
    )
    assert event.details == {
        "status": "partially_failed",
        "counts": {"failed": 1, "succeeded": 1},
        "worker": OWNER,
        "partitions": outcomes,
    }
    assert list(event.details["counts"]) == ["failed", "succeeded"]  # in status order
    assert rendered(event).details == event.details  # plain JSON: it reads back as written
