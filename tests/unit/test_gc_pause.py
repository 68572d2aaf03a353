"""The collector pause: shared by overlapping callers, restored only by the last, never turned on when
it was off before; taken while a large JSON body is handled."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import httpx
import pytest
from fastapi import APIRouter, FastAPI

from app.api.strict_json import PAUSE_COLLECTION_BYTES, StrictJsonRoute
from app.gc_pause import YOUNG_THRESHOLD, collection_paused, freeze_startup_objects


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


def test_serving_processes_collect_the_young_generation_less_often() -> None:
    before = gc.get_threshold()
    try:
        freeze_startup_objects()
        assert gc.get_threshold() == (YOUNG_THRESHOLD, before[1], before[2])
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


async def test_the_collector_is_paused_while_a_large_json_body_is_handled() -> None:
    router = APIRouter(route_class=StrictJsonRoute)

    @router.post("/entries")
    async def entries(body: dict[str, list[int]]) -> dict[str, bool]:
        return {"collecting": gc.isenabled()}

    app = FastAPI()
    app.include_router(router)
    gc.enable()
    large = {"entries": list(range(PAUSE_COLLECTION_BYTES // 4))}  # about 6 bytes per entry
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://api") as client:
        assert (await client.post("/entries", json={"entries": [1, 2]})).json() == {"collecting": True}
        assert (await client.post("/entries", json=large)).json() == {"collecting": False}
    assert gc.isenabled()
