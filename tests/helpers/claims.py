"""Claims for the worker's tests: a claimed partition as the executor holds it (built in memory, for unit
tests), and claiming and answering partitions through the database (for integration tests)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories import claims as repo
from app.adapters.db.repositories.write_back import PartitionUpdate
from app.adapters.db.session import write_transaction
from app.domain.deletion_requests import PartitionStatus
from app.domain.ports import Claim


def claim(now: datetime, **overrides: Any) -> Claim:
    """A 30 s deadline from ``now`` on cluster ``demo``, every other field overridable."""
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


async def claim_due(
    sessionmaker: async_sessionmaker[AsyncSession],
    owner: str,
    now: datetime,
    *,
    limit: int = 100,
    lease: float = 30,
) -> list[Claim]:
    """The partitions ``owner`` claims at ``now``, in a transaction of their own."""
    async with write_transaction(sessionmaker) as session:
        return await repo.claim_due(session, owner=owner, now=now, lease_seconds=lease, limit=limit)


def answer(
    claim: Claim, status: PartitionStatus, now: datetime, low_watermark: int | None = None
) -> PartitionUpdate:
    """The write of one partition's DeleteRecords answer: a success at ``low_watermark`` (the claim's
    resolved offset unless given; the leader's log start offset too), or a failure as a compacted topic
    answers (POLICY_VIOLATION)."""
    failed = status is PartitionStatus.FAILED
    if low_watermark is None and not failed:
        low_watermark = claim.resolved_offset
    return PartitionUpdate(
        id=claim.id,
        fence=claim.fence,
        status=status,
        low_watermark=low_watermark,
        leader_log_start_offset=low_watermark,
        error_code="POLICY_VIOLATION" if failed else None,
        error_message="compacted" if failed else None,
        next_attempt_at=now,
    )
