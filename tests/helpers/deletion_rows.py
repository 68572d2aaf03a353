"""Test helper: a deletion row as the API builds it before storing, and its planned partitions."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from app.adapters.db.models import Deletion
from app.adapters.db.repositories.deletions import PlannedPartition
from app.domain.ports import TopicPartition


def new_deletion(planned: list[PlannedPartition], **fields: Any) -> Deletion:
    """A pending deletion of ``planned`` by User:alice, not stored yet; ``fields`` override columns."""
    now = datetime.now(UTC)
    columns: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "cluster": "demo",
        "principal": "User:alice",
        "principal_groups": [],
        "client_host": "127.0.0.1",
        "request_id": uuid.uuid4().hex,
        "reason": "test",
        "leader_only": False,
        "timeout_ms": 30_000,
        "status": "pending",
        "partition_count": len(planned),
        "topics": sorted({p.partition.topic for p in planned}),
        "idempotency_key": None,
        "request_hash": None,
        "created_at": now,
        "updated_at": now,
        "finished_at": None,
    }
    return Deletion(**(columns | fields))


def offsets(topic: str, partitions: int, offset: int) -> list[PlannedPartition]:
    """``partitions`` partitions of ``topic``, each cut at ``offset`` (one spec object for all)."""
    spec: dict[str, object] = {"offset": offset}
    return [PlannedPartition(TopicPartition(topic, p), offset, offset, spec) for p in range(partitions)]
