"""The audit events the executor's write-back appends: ``deletion.partition_failed`` per failed
partition and ``deletion.completed`` per deletion that became terminal, written by the executor's own
principal in the transaction that writes the rows.

The completion event lists the outcomes column by column: ``partitions`` maps ``topic``, ``partition``,
``resolved_offset``, ``status``, ``low_watermark``, ``leader_log_start_offset``, ``error_code``,
``attempts``, ``fence`` and ``worker`` to lists whose i-th entries are one partition, in (topic,
partition) order. At 10,000 partitions that encodes and hashes several times faster than one object per
partition, on the write-back's critical path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from app.adapters.db.repositories.claims import Claim, PartitionUpdate
from app.audit import NewEvent, canonical_json, canonical_object, events
from app.domain.deletions import DeletionStatus, PartitionStatus


def failure_events(
    fresh: Sequence[PartitionUpdate], claims: Mapping[int, Claim], owner: str
) -> list[NewEvent]:
    """One ``deletion.partition_failed`` event per failed row of ``fresh``, in their order."""
    return [
        failure_event(claims[update.id], update, owner)
        for update in fresh
        if update.status is PartitionStatus.FAILED
    ]


def failure_event(claim: Claim, update: PartitionUpdate, owner: str) -> NewEvent:
    return events.deletion_partition_failed(
        claim.request_id,
        claim.cluster,
        claim.deletion_id,
        {
            "topic": claim.topic,
            "partition": claim.partition,
            "resolved_offset": claim.resolved_offset,
            "error_code": update.error_code,
            "error_message": update.error_message,
            "low_watermark": update.low_watermark,
            "leader_log_start_offset": update.leader_log_start_offset,
            "attempts": claim.attempts,
            "worker": owner,
            "fence": claim.fence,
        },
    )


def completion_event(
    sample: Claim,
    status: DeletionStatus,
    counts: Mapping[PartitionStatus, int],
    outcomes: dict[str, list[Any]],
    owner: str,
) -> NewEvent:
    return events.deletion_completed(
        sample.request_id,
        sample.cluster,
        sample.deletion_id,
        {
            "status": status.value,
            "counts": {s.value: n for s, n in sorted(counts.items())},
            "worker": owner,
            "partitions": outcomes,
        },
    )


def rendered_completion(
    sample: Claim,
    status: DeletionStatus,
    counts: Mapping[PartitionStatus, int],
    made: tuple[dict[str, list[Any]], str],
    owner: str,
) -> NewEvent:
    """The completion event with the columns an ``OutcomeSummary`` made and rendered: its details are
    rendered around them (what ``rendered`` gives, without encoding the columns again)."""
    columns, columns_json = made
    event = completion_event(sample, status, counts, columns, owner)
    parts = {key: canonical_json(value) for key, value in event.details.items() if key != "partitions"}
    return dataclasses.replace(event, details_json=canonical_object({**parts, "partitions": columns_json}))
