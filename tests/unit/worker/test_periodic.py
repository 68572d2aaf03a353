"""``Periodic``: the loop of the retention scheduler, approval expiry, audit checkpointer and webhook
dispatcher ends when stopped, also when a wake came in the same turn of the event loop (the webhook
dispatcher is woken by the events a deletion's end writes, which may come as the service shuts down)."""

from __future__ import annotations

import asyncio
import logging

from app.worker.periodic import Periodic

log = logging.getLogger("test")


async def test_a_stop_right_after_a_wake_ends_the_loop() -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        ticks += 1

    periodic = Periodic(tick, 3600, name="test", log=log)
    await periodic.start()
    await asyncio.sleep(0.05)  # the first tick ran; the loop waits for the interval or a wake
    assert ticks == 1
    periodic.wake()
    async with asyncio.timeout(5):  # the stop's cancel comes in the wake's turn (no task in between)
        await periodic.stop()
    assert not periodic.running
    assert ticks == 1


async def test_a_wake_runs_the_next_tick_at_once() -> None:
    ticked = asyncio.Event()
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        ticks += 1
        if ticks == 2:
            ticked.set()

    periodic = Periodic(tick, 3600, name="test", log=log)
    await periodic.start()
    await asyncio.sleep(0.01)
    periodic.wake()
    await asyncio.wait_for(ticked.wait(), 5)
    await periodic.stop()
