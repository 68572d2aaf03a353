"""Helpers for the API tests (imported by name: pytest puts this directory on sys.path)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import uvicorn

PROBLEM = "application/problem+json"


def deletion_body(*partitions: tuple[str, int, int], **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "cluster": "demo",
        "partitions": [{"topic": t, "partition": p, "offset": o} for t, p, o in partitions],
        "reason": "test erasure",
    }
    body.update(fields)
    return body


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["type"].startswith("/problems/")
    assert body["title"]
    assert body["request_id"] == response.headers["x-request-id"]
    return body


async def wait_until(check: Callable[[], Any], within: float = 10.0, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + within
    while True:
        result = await check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError("condition not met before the deadline")
        await asyncio.sleep(interval)


@asynccontextmanager
async def served(config: uvicorn.Config) -> AsyncIterator[int]:
    """``config``'s app served by uvicorn on a loopback port for the block; the port."""
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:  # noqa: ASYNC110 - uvicorn offers no event to wait on
            await asyncio.sleep(0.01)
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        await serving
