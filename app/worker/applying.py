"""Writing outcomes back: one transaction per sent group, fenced per row, audited in the same transaction.

In order, inside one write transaction: lock the affected deletions (id order), write every row this
worker still holds with the fence it claimed (one statement on PostgreSQL, one executemany on SQLite),
append one ``deletion.partition_failed`` event per failed partition, then roll each
deletion's status up from per-status counts and, when it becomes terminal, append a
``deletion.completed`` event listing every partition's outcome. A stale worker's rows are skipped and
counted, never written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories import claims as repo
from app.adapters.db.repositories.claims import Claim, PartitionUpdate
from app.adapters.db.session import write_transaction
from app.audit import append_event
from app.domain.deletions import DeletionStatus, PartitionStatus, overall_status

EXECUTOR_PRINCIPAL = "Service:kafka-purge-executor"
TERMINAL_DELETION = frozenset(
    {
        DeletionStatus.SUCCEEDED,
        DeletionStatus.PARTIALLY_FAILED,
        DeletionStatus.FAILED,
        DeletionStatus.CANCELLED,
    }
)


@dataclass
class ApplyResult:
    applied: Counter[PartitionStatus] = field(default_factory=Counter)
    stale: int = 0
    completed: list[str] = field(default_factory=list)


async def apply_updates(
    sessionmaker: async_sessionmaker[AsyncSession],
    *,
    owner: str,
    claims: Mapping[int, Claim],
    updates: Sequence[PartitionUpdate],
    now: datetime,
) -> ApplyResult:
    result = ApplyResult()
    async with write_transaction(sessionmaker) as session:
        before = await repo.lock_deletions(session, sorted({claims[u.id].deletion_id for u in updates}))
        written = await repo.write_updates(session, updates, owner=owner, now=now)
        fresh = [u for u in updates if u.id in written]
        result.stale = len(updates) - len(fresh)
        for update in fresh:
            result.applied[update.status] += 1
            if update.status is PartitionStatus.FAILED:
                await _audit_failure(session, claims[update.id], update, owner)
        for deletion_id in sorted({claims[u.id].deletion_id for u in fresh}):
            if await _roll_up(session, claims, deletion_id, before[deletion_id], now, owner):
                result.completed.append(deletion_id)
    return result


async def _audit_failure(session: AsyncSession, claim: Claim, update: PartitionUpdate, owner: str) -> None:
    await append_event(
        session,
        action="deletion.partition_failed",
        principal=EXECUTOR_PRINCIPAL,
        client_host=None,
        request_id=claim.request_id,
        cluster=claim.cluster,
        deletion_id=claim.deletion_id,
        details={
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


async def _roll_up(
    session: AsyncSession,
    claims: Mapping[int, Claim],
    deletion_id: str,
    previous: str,
    now: datetime,
    owner: str,
) -> bool:
    """Recompute the deletion's status; True when it just became terminal (and was audited)."""
    counts = await repo.status_counts(session, deletion_id)
    status = overall_status(Counter(counts).elements())
    if status.value == previous:
        return False
    finished = status in TERMINAL_DELETION
    await repo.set_deletion_status(session, deletion_id, status.value, now=now, finished=finished)
    if not finished or DeletionStatus(previous) in TERMINAL_DELETION:
        return False
    sample = next(c for c in claims.values() if c.deletion_id == deletion_id)
    await append_event(
        session,
        action="deletion.completed",
        principal=EXECUTOR_PRINCIPAL,
        client_host=None,
        request_id=sample.request_id,
        cluster=sample.cluster,
        deletion_id=deletion_id,
        details={
            "status": status.value,
            "counts": {s.value: n for s, n in sorted(counts.items())},
            "worker": owner,
            "partitions": await repo.partition_outcomes(session, deletion_id),
        },
    )
    return True
