"""Writing a sent group's outcomes back while its leaders are still answering.

Each leader's answer is decided as it arrives. Rows of deletions whose other rows are still being sent
are written at once, in a transaction of their own (``transaction.apply_updates``) that locks nothing but
those rows, side by side with the writes under way. A 10,000-partition deletion over three leaders is
thus mostly written while the slowest leader is still working, and only its own rows are left to write
when it answers.

A deletion's status is rolled up only by the write of the group's last undecided rows of it: before
that, some of its rows are still being sent, so it cannot have reached a terminal status. Such rolling
writes run one at a time; answers that roll deletions up while one runs go together into the next (a
batch of many small deletions rolls one up with nearly every answer). A rolling write counts on every
write started before it: on PostgreSQL it writes its own rows and renders the completion summaries
while those are still under way, and waits for them to end only before it rolls up (they lock no row
it locks); on SQLite, whose single write lock they need, it waits before it starts. The rows this group
wrote with a terminal status are remembered: no one changes such a row again, so the transaction that
completes the deletion knows them without reading them back.

Each written row gives its lease back; the rows still waiting for an answer or a write keep theirs
renewed (``leased``). A write that fails ``APPLY_ATTEMPTS`` times leaves its rows leased until the lease
runs out; then any instance claims and sends them again (the stored concrete offset makes that harmless).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.faults import fault_name, is_outage
from app.adapters.db.repositories.claims import Claim, PartitionUpdate
from app.worker.outcomes.earlier import Earlier
from app.worker.outcomes.summary import OutcomeSummary, summary_ahead
from app.worker.outcomes.transaction import ApplyResult, apply_updates

log = logging.getLogger("kafka_purge.worker")

APPLY_ATTEMPTS = 3


class WriteBack:
    """The write-back of one sent group: ``add`` each answer's decided updates, then ``finish``."""

    def __init__(
        self, sessionmaker: async_sessionmaker[AsyncSession], owner: str, claims: Mapping[int, Claim]
    ) -> None:
        self._sessionmaker, self._owner, self._claims = sessionmaker, owner, claims
        self._undecided = set(claims)
        self._settled: list[PartitionUpdate] = []  # written with a terminal status
        # Writes of rows of deletions still being sent, with their updates.
        self._side: dict[asyncio.Task[bool], Sequence[PartitionUpdate]] = {}
        self._queued: list[PartitionUpdate] = []  # updates that roll a deletion up, waiting their turn
        self._queued_at = datetime.now(UTC)  # when the newest queued updates were decided
        self._rolling: asyncio.Task[None] | None = None
        # The completion summary's part the claims fix, made once the first answer is in, while the
        # other leaders work (``summary``).
        self._summary: OutcomeSummary | None = None
        self._summary_due = True
        self.result = ApplyResult()

    def leased(self) -> list[Claim]:
        """The claims whose rows this group still holds and has not started writing."""
        queued = {update.id for update in self._queued}
        return [self._claims[i] for i in sorted(self._undecided | queued)]

    def add(self, updates: Sequence[PartitionUpdate], now: datetime) -> None:
        """Write the updates decided at ``now``: at once, unless they roll a deletion up (then in the next
        rolling write)."""
        self._undecided.difference_update(update.id for update in updates)
        open_deletions = {self._claims[i].deletion_id for i in self._undecided}
        if all(self._claims[u.id].deletion_id in open_deletions for u in updates):
            write = asyncio.create_task(self._write(updates, now, open_deletions), name="write-back")
            self._side[write] = updates
        else:
            self._queued += updates
            self._queued_at = now
            if self._rolling is None or self._rolling.done():
                self._rolling = asyncio.create_task(self._roll_queued(), name="write-back roll-up")
        if self._summary_due:
            # Once the write just started is on its way (the loop runs callbacks in order).
            self._summary_due = False
            asyncio.get_running_loop().call_soon(self._make_summary)

    def _make_summary(self) -> None:
        self._summary = summary_ahead(self._claims, self._owner)

    async def finish(self) -> ApplyResult:
        """Wait until every update is written (or given up on); the results of all writes."""
        # No write starts once the answers are in: the ones there are now are all (a failed one fails the
        # group).
        await asyncio.gather(*self._writes())
        return self.result

    def cancel(self) -> None:
        """Stop writing (the executor is stopping): what is not written stays leased until the lease runs
        out."""
        for write in self._writes():
            write.cancel()

    def _writes(self) -> list[asyncio.Task[Any]]:
        return [*self._side, *([self._rolling] if self._rolling is not None else [])]

    async def _roll_queued(self) -> None:
        while self._queued:
            updates, self._queued = self._queued, []
            open_deletions = {self._claims[i].deletion_id for i in self._undecided}
            # The roll-up counts on every write started before: it waits for those still under way.
            under_way = {w: u for w, u in self._side.items() if not w.done()}
            await self._write(updates, self._queued_at, open_deletions, under_way)

    async def _write(
        self,
        updates: Sequence[PartitionUpdate],
        now: datetime,
        open_deletions: set[str],
        under_way: Mapping[asyncio.Task[bool], Sequence[PartitionUpdate]] | None = None,
    ) -> bool:
        """Write ``updates``; whether every one of them was written."""
        earlier = Earlier(lambda: self._settled, under_way or {})
        result = await self._apply(updates, now, open_deletions, earlier)
        if result is None:
            return False
        self.result.applied.update(result.applied)
        self.result.stale += result.stale
        self.result.completed += result.completed
        self._settled += (u for u in updates if u.id in result.written and u.status.terminal)
        return result.stale == 0

    async def _apply(
        self, updates: Sequence[PartitionUpdate], now: datetime, open_deletions: set[str], earlier: Earlier
    ) -> ApplyResult | None:
        for attempt in range(1, APPLY_ATTEMPTS + 1):
            try:
                return await apply_updates(
                    self._sessionmaker,
                    owner=self._owner,
                    claims=self._claims,
                    updates=updates,
                    now=now,
                    earlier=earlier,
                    open_deletions=open_deletions,
                    summary=self._summary,
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
        return None
