"""A claimed partition as the executor holds it, for unit tests of the worker: a 30 s deadline from
``now`` on cluster ``demo``, every other field overridable."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from app.domain.deletion_requests import PartitionStatus
from app.domain.ports import Claim


def claim(now: datetime, **overrides: Any) -> Claim:
    fields: dict[str, Any] = {
        "id": 0,
        "deletion_id": "d",
        "topic": "orders",
        "partition": 0,
        "resolved_offset": 10,
        "status": PartitionStatus.IN_PROGRESS,
        "fence": 1,
        "attempts": 1,
        "deadline_at": now + timedelta(seconds=30),
        "cluster": "demo",
        "leader_only": False,
        "timeout_ms": 30_000,
        "request_id": "r",
    }
    return Claim(**{**fields, **overrides})
