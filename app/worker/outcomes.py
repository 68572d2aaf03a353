"""Writing the executor's outcomes back: one write transaction per leader's answer.

Each leader's answer is decided as it arrives (``app.worker.retries``) and written at once by
``record_outcomes``, in this order, inside one transaction:

1. write every row this worker still holds with the fence it claimed, giving its lease back (one
   statement on PostgreSQL, one executemany on SQLite); a stale worker's rows are skipped and counted,
   never written;
2. lock the deletions whose rows were written (id order, so two writers never deadlock; on SQLite
   BEGIN IMMEDIATE already serializes writers): answers for rows of one deletion written by concurrent
   transactions (other groups, other instances) write their rows side by side and roll the deletion up
   one at a time, each counting after the ones before it committed;
3. roll each of them up from its partitions' per-status counts, read under the lock (one query for all,
   one UPDATE per status reached): status, ``finished_at``;
4. for each deletion that just became terminal (only the transaction that moves it there sees it
   non-terminal before, so its completion is recorded exactly once): its completion summary, every
   partition's outcome read back from the rows, and its webhook outbox rows
   (``app.adapters.db.repositories.webhooks``);
5. append one ``deletion.partition_failed`` event per failed partition and one ``deletion.completed``
   per deletion that became terminal, in one append, last: appending locks the audit head until commit,
   which every other appender waits for.

The rows still waiting for an answer keep their leases renewed (``WriteBack.leased``,
``app.worker.dispatch``). A write that fails ``APPLY_ATTEMPTS`` times leaves its rows leased until the
lease runs out; then any instance claims and sends them again (the stored concrete offset makes that
harmless).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.faults import fault_name, is_outage
from app.adapters.db.repositories import write_back as repo
from app.adapters.db.repositories.webhooks import enqueue_events
from app.adapters.db.repositories.write_back import PartitionUpdate
from app.adapters.db.session import write_transaction
from app.audit import NewEvent, append_events, events
from app.domain.deletion_requests import DeletionStatus, PartitionStatus, overall_status
from app.domain.ports import Claim
from app.domain.webhook_events import ended_events

log = logging.getLogger("kafka_purge.worker")

APPLY_ATTEMPTS = 3
TERMINAL_DELETION = frozenset(
    {
        DeletionStatus.SUCCEEDED,
        DeletionStatus.PARTIALLY_FAILED,
        DeletionStatus.FAILED,
        DeletionStatus.CANCELLED,
    }
)
# The deletions that just became terminal, with their status and per-status partition counts.
Completed = dict[str, tuple[DeletionStatus, dict[PartitionStatus, int]]]


@dataclass
class ApplyResult:
    applied: Counter[PartitionStatus] = field(default_factory=Counter)
    written: set[int] = field(default_factory=set)
    stale: int = 0
    completed: list[str] = field(default_factory=list)

    def add(self, other: ApplyResult) -> None:
        self.applied.update(other.applied)
        self.written |= other.written
        self.stale += other.stale
        self.completed += other.completed


class WriteBack:
    """The write-back of one sent group: ``write`` each leader's decided updates as it answers; ``result``
    sums what the writes wrote."""

    def __init__(
        self, sessionmaker: async_sessionmaker[AsyncSession], owner: str, claims: Mapping[int, Claim]
    ) -> None:
        self._sessionmaker, self._owner, self._claims = sessionmaker, owner, claims
        self._unwritten = set(claims)
        self.result = ApplyResult()

    def leased(self) -> list[Claim]:
        """The claims whose rows this group still holds and has not started writing."""
        return [self._claims[i] for i in sorted(self._unwritten)]

    async def write(self, updates: Sequence[PartitionUpdate], now: datetime) -> ApplyResult | None:
        """Write ``updates``, decided at ``now``, in one transaction, tried again on a database error up
        to ``APPLY_ATTEMPTS`` times; None when every attempt failed. Their rows leave ``leased`` as the
        write starts: it gives their leases back (or, failing, leaves them to run out)."""
        self._unwritten.difference_update(update.id for update in updates)
        for attempt in range(1, APPLY_ATTEMPTS + 1):
            try:
                result = await apply_updates(
                    self._sessionmaker, owner=self._owner, claims=self._claims, updates=updates, now=now
                )
            except DBAPIError as exc:
                # Deadlock victim, lost connection...: the leases still hold, so trying again is safe.
                if is_outage(exc):
                    log.warning(
                        "writing outcomes failed: database unavailable (%s; attempt %d of %d)",
                        fault_name(exc),
                        attempt,
                        APPLY_ATTEMPTS,
                    )
                else:
                    log.exception("writing outcomes failed (attempt %d of %d)", attempt, APPLY_ATTEMPTS)
                await asyncio.sleep(0.05 * attempt)
                continue
            self.result.add(result)
            return result
        return None


async def apply_updates(
    sessionmaker: async_sessionmaker[AsyncSession],
    *,
    owner: str,
    claims: Mapping[int, Claim],
    updates: Sequence[PartitionUpdate],
    now: datetime,
) -> ApplyResult:
    """``record_outcomes`` in a write transaction of its own."""
    async with write_transaction(sessionmaker) as session:
        return await record_outcomes(session, owner=owner, claims=claims, updates=updates, now=now)


async def record_outcomes(
    session: AsyncSession,
    *,
    owner: str,
    claims: Mapping[int, Claim],
    updates: Sequence[PartitionUpdate],
    now: datetime,
) -> ApplyResult:
    """Write ``updates`` (rows of ``claims`` held by ``owner``) where their fence still holds, roll their
    deletions up and record the completion of those that ended, audited (the module's steps 1-5)."""
    result = ApplyResult()
    if not updates:
        return result
    deletion_ids = sorted({claims[u.id].deletion_id for u in updates})
    written = await repo.write_updates(session, updates, deletions=deletion_ids, owner=owner, now=now)
    fresh = [u for u in updates if u.id in written]
    result.written, result.stale = written, len(updates) - len(fresh)
    result.applied.update(u.status for u in fresh)
    rolled = sorted({claims[u.id].deletion_id for u in fresh})
    completed = await _roll_up(session, rolled, now) if rolled else {}
    samples = {claims[u.id].deletion_id: claims[u.id] for u in fresh}
    outcomes = await repo.partition_outcomes(session, list(completed)) if completed else {}
    new_events = failure_events(fresh, claims, owner)
    for deletion_id, (status, counts) in completed.items():
        sample = samples[deletion_id]
        new_events.append(events.deletion_completed(sample, status, counts, outcomes[deletion_id], owner))
        result.completed.append(deletion_id)
    clusters = {deletion_id: samples[deletion_id].cluster for deletion_id in completed}
    await enqueue_events(session, ended_events(completed, clusters), now)
    await append_events(session, new_events)
    return result


async def _roll_up(session: AsyncSession, deletion_ids: Sequence[str], now: datetime) -> Completed:
    """Lock the deletions and recompute each one's status from its partitions' counts, read under the
    lock; those that just became terminal."""
    previous = await repo.lock_deletions(session, deletion_ids)
    completed: Completed = {}
    moves: dict[DeletionStatus, list[str]] = defaultdict(list)
    for deletion_id, counts in (await repo.status_counts(session, deletion_ids)).items():
        status = overall_status(Counter(counts).elements())
        was = previous[deletion_id]
        if status.value == was:
            continue
        moves[status].append(deletion_id)
        if status in TERMINAL_DELETION and DeletionStatus(was) not in TERMINAL_DELETION:
            completed[deletion_id] = (status, counts)
    # One statement per status reached: a batch of small deletions mostly reaches one.
    for status, moved in moves.items():
        finished = status in TERMINAL_DELETION
        await repo.set_deletion_status(session, moved, status.value, now=now, finished=finished)
    return completed


def failure_events(
    fresh: Sequence[PartitionUpdate], claims: Mapping[int, Claim], owner: str
) -> list[NewEvent]:
    """One ``deletion.partition_failed`` event per failed row of ``fresh``, in their order."""
    return [
        events.deletion_partition_failed(claims[update.id], update, owner)
        for update in fresh
        if update.status is PartitionStatus.FAILED
    ]
