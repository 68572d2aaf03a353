"""Helpers for the retention tests: records, group commits (kafka-python, as a real group would commit),
ACL bindings, bearer headers and polling."""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Callable
from typing import Any

import httpx


def _commit(bootstrap: str, group: str, offsets: dict[tuple[str, int], int]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka import KafkaConsumer, TopicPartition
        from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        consumer.commit({TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()})
    finally:
        consumer.close()


async def commit(emulator: Any, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Commit offsets for ``group`` without joining it (the group stays Empty)."""
    await asyncio.to_thread(_commit, emulator.bootstrap, group, offsets)


async def wait_until(check: Callable[[], Any], within: float = 15.0, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + within
    while True:
        result = await check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError("condition not met before the deadline")
        await asyncio.sleep(interval)


def policy_body(name: str = "inter", **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "topics": {"prefix": "inter."},
        "consumers": {"groups": ["billing"], "spark": ["enricher"]},
        "interval_seconds": 1,
        **fields,
    }


def progress_body(batch_id: int, offsets: dict[str, dict[str, int]], query_id: str = "q-1") -> dict[str, Any]:
    return {"query_id": query_id, "run_id": "r-1", "batch_id": batch_id, "offsets": offsets}


async def grant(
    client: httpx.AsyncClient,
    admin: dict[str, str],
    principal: str,
    operation: str,
    resource: str,
    *,
    pattern: str = "LITERAL",
    permission: str = "ALLOW",
) -> None:
    """Add one binding through the API; ``resource`` is ``TYPE:name`` (e.g. ``GROUP:billing``)."""
    resource_type, _, name = resource.partition(":")
    binding = {
        "principal": principal,
        "operation": operation,
        "permission_type": permission,
        "resource_type": resource_type,
        "resource_name": name,
        "pattern_type": pattern,
    }
    response = await client.post("/v1/clusters/demo/acls", json=binding, headers=admin)
    assert response.status_code == 201, response.text
