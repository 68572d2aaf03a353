"""A background task that runs one tick of work every interval, until stopped.

The retention scheduler and the audit checkpointer both poll the database this way: a tick that fails
(a database hiccup) is logged and the next one runs all the same, and ``wake`` runs the next tick at
once instead of after the interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from app.adapters.db.faults import fault_name, is_outage


class Periodic:
    """Calls ``tick`` every ``interval`` seconds (sooner after ``wake``) between ``start`` and ``stop``."""

    def __init__(
        self, tick: Callable[[], Awaitable[object]], interval: float, *, name: str, log: logging.Logger
    ) -> None:
        self._tick = tick
        self._interval = interval
        self._name = name
        self._log = log
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def wake(self) -> None:
        self._wake.set()

    async def start(self) -> None:
        if not self.running:
            self._task = asyncio.create_task(self._run(), name=self._name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            try:
                await self._tick()
            except Exception as exc:  # one failed tick must not end the work
                if is_outage(exc):
                    self._log.warning(
                        "%s: tick failed: database unavailable (%s)", self._name, fault_name(exc)
                    )
                else:
                    self._log.exception("%s: tick failed", self._name)
            self._wake.clear()
            # asyncio.timeout, not wait_for: on Python 3.11, wait_for returns normally when the wait ends in
            # the same turn as a cancel (a wake as the service stops), and the loop would never end.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._interval):
                    await self._wake.wait()
