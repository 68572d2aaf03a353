"""Writing a sent group's outcomes back while its leaders are still answering.

Each leader's answer is decided as it arrives and written at once, in a transaction of its own
(``applying.apply_updates``): answers that arrive while an earlier one is being written do not wait for
it, their rows are distinct and such a write takes no lock but its rows'. A 10,000-partition deletion over
three leaders is thus mostly written while the slowest leader is still working, and only its own rows
are left to write when it answers.

A deletion's status is rolled up only by the write of the group's last undecided rows of it: before
that, some of its rows are still being sent, so it cannot have reached a terminal status. That write
starts once every earlier write of the group ended (it locks the deletion, and counts on what they
wrote). The rows this group wrote with a terminal status are remembered: no one changes such a row
again, so the transaction that completes the deletion knows them without reading them back.

Each written row gives its lease back; the rows still waiting for an answer or a write keep theirs
renewed (``leased``). A write that fails ``APPLY_ATTEMPTS`` times leaves its rows leased until the lease
runs out; then any instance claims and sends them again (the stored concrete offset makes that harmless).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime

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
        self._unwritten: set[int] = set()  # decided, their write not started yet
        self._settled: list[PartitionUpdate] = []  # written with a terminal status
        self._writes: list[asyncio.Task[None]] = []
        self.result = ApplyResult()

    def leased(self) -> list[Claim]:
        """The claims whose rows this group still holds and has not started writing."""
        return [self._claims[i] for i in sorted(self._undecided | self._unwritten)]

    def add(self, updates: Sequence[PartitionUpdate], now: datetime) -> None:
        """Write the updates decided at ``now``: at once, unless they complete a deletion of the group (see
        the module's docstring)."""
        self._undecided.difference_update(update.id for update in updates)
        open_deletions = {self._claims[i].deletion_id for i in self._undecided}
        rolls_up = any(self._claims[u.id].deletion_id not in open_deletions for u in updates)
        earlier = list(self._writes) if rolls_up else []
        ids = {update.id for update in updates}
        self._unwritten |= ids
        write = self._write(updates, now, open_deletions, earlier, ids)
        self._writes.append(asyncio.create_task(write, name="write-back"))

    async def finish(self) -> ApplyResult:
        """Wait until every update is written (or given up on); the results of all writes."""
        await asyncio.gather(*self._writes)
        return self.result

    def cancel(self) -> None:
        """Stop writing (the executor is stopping): what is not written stays leased until the lease runs
        out."""
        for write in self._writes:
            write.cancel()

    async def _write(
        self,
        updates: Sequence[PartitionUpdate],
        now: datetime,
        open_deletions: set[str],
        earlier: Sequence[asyncio.Task[None]],
        ids: set[int],
    ) -> None:
        if earlier:
            await asyncio.wait(earlier)
        self._unwritten -= ids
        result = await self._apply(updates, now, open_deletions)
        if result is None:
            return
        self.result.applied.update(result.applied)
        self.result.stale += result.stale
        self.result.completed += result.completed
        self._settled += (u for u in updates if u.id in result.written and u.status.terminal)

    async def _apply(
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
