"""What a write-back transaction counts on from the writes of its group that came before it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from app.adapters.db.repositories.claims import PartitionUpdate


@dataclass(frozen=True)
class Earlier:
    """What a write counts on from the group's writes before it: ``settled()``, the rows they wrote with a
    terminal status (more as they end), and ``under_way``, those still running, with their updates (each
    answers whether it wrote all of them)."""

    settled: Callable[[], Sequence[PartitionUpdate]] = tuple
    under_way: Mapping[asyncio.Task[bool], Sequence[PartitionUpdate]] = field(default_factory=dict)

    def expected(self) -> list[PartitionUpdate]:
        """The settled rows once every write still under way has written all its rows (one that ended
        has added what it wrote to the settled rows)."""
        running = (
            u
            for write, updates in self.under_way.items()
            if not write.done()
            for u in updates
            if u.status.terminal
        )
        return [*self.settled(), *running]

    async def ended(self) -> None:
        if self.under_way:
            await asyncio.wait(list(self.under_way))

    def all_written(self) -> bool:
        """Whether every write that was under way wrote all its rows (once they ended)."""
        return all(not w.cancelled() and w.exception() is None and w.result() for w in self.under_way)
