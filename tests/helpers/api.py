"""Helpers for the API tests (imported by name: pytest puts this directory on sys.path)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx

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
