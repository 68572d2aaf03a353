"""The details of a ``deletion.requested`` audit event, built from the request and its planned partitions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.adapters.db.repositories.deletions import PlannedPartition
from app.audit import canonical_json
from app.domain.impact import UnconsumedGroup
from app.services.deletions.request import DeletionRequest


def requested_details(
    request: DeletionRequest,
    planned: Sequence[PlannedPartition],
    timeout_ms: int,
    key: str | None,
    overridden: Sequence[UnconsumedGroup] = (),
) -> dict[str, object]:
    """The ``deletion.requested`` event's details: the request's fields, the consumer groups whose
    unread records it removes (accepted through ``allow_unconsumed``), and its partitions."""
    columns, specs = requested_partitions(planned)
    return {
        "reason": request.reason,
        "leader_only": request.leader_only,
        "timeout_ms": timeout_ms,
        "idempotency_key": key,
        "allow_unconsumed": request.allow_unconsumed,
        "ignore_groups": request.ignore_groups,
        # The groups whose unread records this deletion removes, accepted through allow_unconsumed.
        "unconsumed_groups": [
            {"group": g.group, "unread_records": g.unread_records, "partitions": g.partitions}
            for g in overridden
        ],
        "partitions": columns,
        "specs": specs,
    }


def requested_partitions(
    planned: Sequence[PlannedPartition],
) -> tuple[dict[str, list[Any]], list[dict[str, object] | None]]:
    """The ``deletion.requested`` event's ``partitions``, column by column, and its ``specs``.

    ``partitions`` maps ``topic``, ``partition``, ``requested_offset``, ``resolved_offset`` and ``spec``
    to lists whose i-th entries are one partition, in request order; ``spec`` is an index into ``specs``,
    the distinct offset specs (a request usually has one). At 10,000 partitions that encodes and hashes
    several times faster than one object per partition."""
    specs: list[dict[str, object] | None] = []
    by_object: dict[int, int] = {}  # planned partitions of one entry share their spec object
    by_text: dict[str, int] = {}
    indexes: list[int] = []
    for p in planned:
        index = by_object.get(id(p.spec))
        if index is None:
            text = canonical_json(p.spec)
            if text not in by_text:
                by_text[text] = len(specs)
                specs.append(p.spec)
            index = by_object[id(p.spec)] = by_text[text]
        indexes.append(index)
    columns: dict[str, list[Any]] = {
        "topic": [p.partition.topic for p in planned],
        "partition": [p.partition.partition for p in planned],
        "requested_offset": [p.requested_offset for p in planned],
        "resolved_offset": [p.resolved_offset for p in planned],
        "spec": indexes,
    }
    return columns, specs
