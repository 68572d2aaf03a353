"""What the client commands print from the service's answers: the progress line's counts, the preview's
words for each partition and its summary."""

from __future__ import annotations

from typing import Any

from app.cli.output import progress_text
from app.cli.preview import summary_lines, would


def test_progress_is_told_from_the_counts_alone() -> None:
    # The deletion still says pending while its one partition is already in progress.
    assert progress_text({"status": "pending", "partition_count": 1, "counts": {"in_progress": 1}}) == (
        0,
        1,
        "in progress 1",
    )
    deletion = {"partition_count": 4, "counts": {"failed": 1, "succeeded": 2, "pending": 1, "cancelled": 0}}
    assert progress_text(deletion) == (3, 4, "pending 1, succeeded 2, failed 1")


def _partition(outcome: str, records: int, groups: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "topic": "orders",
        "partition": 0,
        "predicted_outcome": outcome,
        "records_deleted": records,
        "unconsumed_groups": groups or [],
    }


def test_preview_says_what_would_happen_never_outcome_none() -> None:
    assert would(_partition("NONE", 10)) == "delete"
    assert would(_partition("NONE", 0)) == "nothing to delete"
    assert would(_partition("OFFSET_OUT_OF_RANGE", 0)) == "fail: OFFSET_OUT_OF_RANGE"
    preview = {
        "cluster": "demo",
        "records_deleted": 10,
        "partitions": [_partition("NONE", 10), {**_partition("POLICY_VIOLATION", 0), "partition": 1}],
        "unconsumed_groups": [
            {
                "group": "billing",
                "state": "Empty",
                "has_active_members": False,
                "unread_records": 4,
                "partitions": 1,
            }
        ],
        "refusals": ["records unread by billing"],
    }
    assert summary_lines(preview) == [
        "This deletes 10 record(s) from 2 partition(s) of orders on cluster demo.",
        "1 consumer group(s) have not read these records yet:",
        "  billing (Empty, no active members): 4 unread record(s) in 1 partition(s)",
        "1 partition(s) would fail: orders-1 (POLICY_VIOLATION)",
        "the service would refuse it: records unread by billing",
    ]
