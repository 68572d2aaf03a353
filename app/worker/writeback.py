"""Writing a sent group's outcomes back while its leaders are still answering.

Each leader's answer is decided as it arrives and queued here; one transaction at a time writes what is
queued (``applying.apply_updates``), so outcomes decided while a transaction runs go together in the
next one. A 10,000-partition deletion over three leaders is thus mostly written while the slowest leader
is still working, and only its own rows are left to write when it answers.

A deletion's status is rolled up only by the transaction that writes the group's last undecided rows of
it: before that, some of its rows are still being sent, so it cannot have reached a terminal status. The
rows this group wrote with a terminal status are remembered: no one changes such a row again, so the
transaction that completes the deletion knows them without reading them back.

Each written row gives its lease back; the rows still waiting for an answer or a write keep theirs
renewed (``leased``). A write that fails ``APPLY_ATTEMPTS`` times leaves its rows leased until the lease
runs out; then any instance claims and sends them again (the stored concrete offset makes that harmless).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories.claims import Claim, PartitionUpdate
from app.worker.applying import ApplyResult, apply_updates

log = logging.getLogger("kafka_purge.worker")

APPLY_ATTEMPTS = 3


class WriteBack:
    """The write-back of one sent group: ``add`` each answer's decided updates, then ``finish``."""

    def __init__(
        self, sessionmaker: async_sessionmaker[AsyncSession], owner: str, claims: Mapping[int, Claim]
    ) -> None:
        self._sessionmaker, self._owner, self._claims = sessionmaker, owner, claims
        self._undecided = set(claims)
        self._queued: list[PartitionUpdate] = []
        self._queued_at = datetime.now(UTC)  # when the newest queued updates were decided
        self._settled: list[PartitionUpdate] = []  # written with a terminal status
        self._task: asyncio.Task[None] | None = None
        self.result = ApplyResult()

    def leased(self) -> list[Claim]:
        """The claims whose rows this group still holds and has not started writing."""
        queued = {update.id for update in self._queued}
        return [self._claims[i] for i in sorted(self._undecided | queued)]

    def add(self, updates: Sequence[PartitionUpdate], now: datetime) -> None:
        """Queue the updates decided at ``now``; written by the transaction under way's successor."""
        self._undecided.difference_update(update.id for update in updates)
        self._queued += updates
        self._queued_at = now
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._write_queued(), name="write-back")

    async def finish(self) -> ApplyResult:
        """Wait until every queued update is written (or given up on); the results of all writes."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)
        return self.result

    def cancel(self) -> None:
        """Stop writing (the executor is stopping): what is not written stays leased until the lease runs
        out."""
        if self._task is not None:
            self._task.cancel()

    async def _write_queued(self) -> None:
        while self._queued:
            updates, self._queued = self._queued, []
            open_deletions = {self._claims[i].deletion_id for i in self._undecided}
            result = await self._write(updates, self._queued_at, open_deletions)
            if result is None:
                continue
            self.result.applied.update(result.applied)
            self.result.stale += result.stale
            self.result.completed += result.completed
            self._settled += (u for u in updates if u.id in result.written and u.status.terminal)

    async def _write(
        self, updates: Sequence[PartitionUpdate], now: datetime, open_deletions: set[str]
    ) -> ApplyResult | None:
        for attempt in range(1, APPLY_ATTEMPTS + 1):
            try:
                return await apply_updates(
                    self._sessionmaker,
                    owner=self._owner,
                    claims=self._claims,
                    updates=updates,
                    now=now,
                    earlier=self._settled,
                    open_deletions=open_deletions,
                )
            except DBAPIError:
                # Deadlock victim, lost connection...: the leases still hold, so trying again is safe.
                log.exception("writing outcomes failed (attempt %d of %d)", attempt, APPLY_ATTEMPTS)
                await asyncio.sleep(0.05 * attempt)
        return None
