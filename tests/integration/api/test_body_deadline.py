"""The service's own body deadline (``PURGE_LIMITS_BODY_TIMEOUT_SECONDS``): a deletion whose body stalls is
answered with a 408 problem carrying the request id, and the connection is to close."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from helpers.api import assert_problem

from app.settings import LimitSettings, Settings

TIMEOUT = 0.5


@pytest.fixture
def run_executor() -> bool:
    return False


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"limits": LimitSettings(body_timeout_seconds=TIMEOUT)})


async def stalled() -> AsyncIterator[bytes]:
    yield b'{"cluster": "local", "partitions": ['
    await asyncio.sleep(TIMEOUT * 20)
    yield b"]}"


async def test_a_stalled_deletion_body_is_a_408_problem(
    app_client: httpx.AsyncClient, alice: dict[str, str]
) -> None:
    headers = {**alice, "content-type": "application/json", "x-request-id": "stalled-body"}
    started = time.monotonic()
    response = await app_client.post("/v1/deletions", content=stalled(), headers=headers)
    assert time.monotonic() - started < TIMEOUT * 10
    problem = assert_problem(response, 408)
    assert (problem["title"], problem["request_id"]) == ("Request Timeout", "stalled-body")
    assert response.headers["connection"] == "close"


async def test_a_prompt_body_is_not_affected(app_client: httpx.AsyncClient, alice: dict[str, str]) -> None:
    response = await app_client.post("/v1/deletions", json={}, headers=alice)
    assert_problem(response, 422)
