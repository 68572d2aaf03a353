"""The collector pause: shared by overlapping callers, restored only by the last, never turned on when
it was off before."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from app.gc_pause import collection_paused


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


async def test_overlapping_pauses_end_with_the_last() -> None:
    gc.enable()
    first_in, second_out = asyncio.Event(), asyncio.Event()

    async def first() -> None:
        with collection_paused():
            first_in.set()
            await second_out.wait()
            assert not gc.isenabled()  # the second caller left, this one still holds the pause

    async def second() -> None:
        await first_in.wait()
        with collection_paused():
            assert not gc.isenabled()
        second_out.set()

    await asyncio.gather(first(), second())
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    with collection_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_an_error_still_ends_the_pause() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), collection_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
