"""What a test was waiting for when pytest-timeout stopped it.

The timeout fails a hung asyncio test with the event loop's ``selector.poll`` as its traceback, which
says nothing about what the loop waits for. A few seconds before the timeout, a timer thread takes the
stacks of every thread and of every unfinished asyncio task; the failed test's report carries them as a
section, shown with its captured output (also from a pytest-xdist worker).
"""

from __future__ import annotations

import asyncio
import gc
import io
import sys
import threading
import traceback
import types

import pytest

TAKEN = pytest.StashKey[list[str]]()
EARLY_SECONDS = 3.0  # how long before the timeout the stacks are taken


def stacks() -> str:
    """Every thread's stack, then every unfinished task's (the garbage collector knows them all)."""
    out = io.StringIO()
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        out.write(f"--- thread {names.get(ident, ident)}\n")
        out.write("".join(traceback.format_stack(frame)))
    alive = gc.get_objects()
    for task in [o for o in alive if isinstance(o, asyncio.Task) and not o.done()]:
        out.write(f"--- task {task.get_name()}\n")
        out.write("".join(awaiting(task.get_coro())))
    # An async generator awaited through __anext__ (an async fixture) is hidden behind its opaque asend
    # object in the task's chain: those suspended in an await, not at a yield, are shown on their own.
    for generator in [o for o in alive if isinstance(o, types.AsyncGeneratorType) and o.ag_await]:
        out.write(f"--- async generator {generator.__qualname__}\n")
        out.write("".join(awaiting(generator)))
    return out.getvalue()


FRAMES = ("cr_frame", "ag_frame", "gi_frame")
AWAITS = ("cr_await", "ag_await", "gi_yieldfrom")


def awaiting(awaitable: object) -> list[str]:
    """Where a coroutine waits, down its chain of awaits (coroutines, async generators, generators):
    a task's own stack shows only its outermost frame."""
    lines = []
    while awaitable is not None:
        frame = next(
            (
                getattr(awaitable, a)
                for a in ("cr_frame", "ag_frame", "gi_frame")
                if getattr(awaitable, a, None)
            ),
            None,
        )
        if frame is None:
            lines.append(f"  awaits {awaitable!r}\n")
            break
        lines.extend(traceback.format_stack(frame, limit=1))
        awaitable = next(
            (
                getattr(awaitable, a)
                for a in ("cr_await", "ag_await", "gi_yieldfrom")
                if hasattr(awaitable, a)
            ),
            None,
        )
    return lines


def start_timer(item: pytest.Item) -> threading.Timer | None:
    """A timer that takes the stacks shortly before ``item``'s pytest-timeout, or None without one."""
    marker = item.get_closest_marker("timeout")
    seconds = float(marker.args[0]) if marker and marker.args else float(item.config.getini("timeout") or 0)
    if seconds <= EARLY_SECONDS:
        return None
    taken = item.stash.setdefault(TAKEN, [])
    timer = threading.Timer(seconds - EARLY_SECONDS, lambda: taken.append(stacks()))
    timer.daemon = True
    timer.start()
    return timer
