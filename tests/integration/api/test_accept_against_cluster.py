"""Accepting against the emulated cluster: -1 becomes the high watermark at accept time (and only that
offset is ever sent), unknown topics and partitions are refused as a whole."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from helpers.api import assert_problem, deletion_body, wait_until
from helpers.kafka_records import produce
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.kafka import KafkaClusters
from app.domain.ports import TopicPartition
from app.settings import Settings
from app.worker import Executor


@pytest.fixture
def run_executor() -> bool:
    return False


async def test_minus_one_is_resolved_at_accept_time_and_sent_as_such(
    app_client: httpx.AsyncClient,
    alice: dict[str, str],
    orders: str,
    emulator: Any,
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    response = await app_client.post("/v1/deletions", json=deletion_body((orders, 1, -1)), headers=alice)
    assert response.status_code == 202
    deletion_id = response.json()["id"]
    assert response.json()["partitions"][0]["resolved_offset"] == 20

    # Records produced after the request was accepted must survive its execution.
    await produce(emulator, orders, {1: 5})
    gateway = KafkaClusters(settings.clusters)
    try:
        executor = Executor(sessionmaker, gateway, settings)

        async def finished() -> bool:
            await executor.run_once()
            read = await app_client.get(f"/v1/deletions/{deletion_id}", headers=alice)
            return bool(read.json()["status"] == "succeeded")

        await wait_until(finished)
        tp = TopicPartition(orders, 1)
        assert await gateway.log_start_offsets("demo", [tp]) == {tp: 20}
        assert await gateway.high_watermarks("demo", [tp]) == {tp: 25}
    finally:
        await gateway.close()


async def test_unknown_topics_and_partitions_are_listed_and_nothing_is_stored(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str
) -> None:
    body = deletion_body((orders, 0, 1), ("missing", 0, 1), (orders, 3, 1), (orders, 2, 1))
    problem = assert_problem(await app_client.post("/v1/deletions", json=body, headers=alice), 404)
    assert problem["type"] == "/problems/topic-not-found"
    assert problem["detail"] == f"2 partition(s) do not exist on cluster 'demo': missing-0, {orders}-3."
    assert problem["unknown_count"] == 2
    assert problem["errors"] == [
        {"pointer": "#/partitions/1", "detail": "unknown topic or partition missing-0"},
        {"pointer": "#/partitions/2", "detail": f"unknown topic or partition {orders}-3"},
    ]
    assert (await app_client.get("/v1/deletions", headers=alice)).json()["items"] == []


async def test_unknown_partitions_are_capped_at_fifty(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str
) -> None:
    body = deletion_body(*((orders, p, 1) for p in range(3, 103)))
    problem = assert_problem(await app_client.post("/v1/deletions", json=body, headers=alice), 404)
    assert problem["unknown_count"] == 100
    assert len(problem["errors"]) == 50
    assert "error_count" not in problem


async def test_an_offset_above_the_high_watermark_is_refused_naming_it(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str
) -> None:
    body = deletion_body((orders, 0, 10), (orders, 1, 21), (orders, 2, 5))
    problem = assert_problem(await app_client.post("/v1/deletions", json=body, headers=alice), 409)
    assert problem["type"] == "/problems/offset-out-of-range"
    assert problem["above_high_watermark_count"] == 1
    assert problem["high_watermarks"] == [{"topic": orders, "partition": 1, "high_watermark": 20}]
    assert problem["errors"] == [
        {"pointer": "#/partitions/1", "detail": f"offset 21 is above the high watermark 20 of {orders}-1"}
    ]
    assert (await app_client.get("/v1/deletions", headers=alice)).json()["items"] == []
    # At the high watermark itself the whole partition is deleted: accepted.
    accepted = await app_client.post("/v1/deletions", json=deletion_body((orders, 1, 20)), headers=alice)
    assert accepted.status_code == 202


async def test_integral_numbers_are_taken_as_integers_exactly(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str
) -> None:
    """10.0 and 1e1 are integers to JSON Schema: accepted as 10. An offset past 2**53 written with a zero
    fraction keeps every digit (a float would round 9007199254740993 to ...992)."""
    raw = (
        b'{"cluster": "demo", "reason": "integral numbers", "partitions": ['
        b'{"topic": "%s", "partition": 1.0, "offset": 1e1}, {"topic": "%s", "partition": 0, "offset": 10.0}]}'
    ) % (orders.encode(), orders.encode())
    headers = {**alice, "content-type": "application/json"}
    accepted = await app_client.post("/v1/deletions", content=raw, headers=headers)
    assert accepted.status_code == 202, accepted.text
    assert sorted((p["partition"], p["requested_offset"]) for p in accepted.json()["partitions"]) == [
        (0, 10),
        (1, 10),
    ]
    exact = b'{"cluster": "demo", "reason": "r", "partitions": [{"topic": "%s", "partition": 2, ' % (
        orders.encode()
    )
    far = await app_client.post(
        "/v1/deletions", content=exact + b'"offset": 9007199254740993.0}]}', headers=headers
    )
    problem = assert_problem(far, 409)
    assert "offset 9007199254740993 is above" in problem["errors"][0]["detail"]
