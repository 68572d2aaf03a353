"""The executor against a scripted broker whose DeleteRecords answers REQUEST_TIMED_OUT with a low
watermark that already covers the offset: the records are gone, so the partition succeeds on that answer
and keeps the broker's error beside it (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.scripted_broker import ScriptedBroker
from helpers.worker import Target, audit_events, insert_deletion, partitions_of
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.settings import ClusterSettings
from app.worker import Executor

REQUEST_TIMED_OUT = 7


def _timed_out_past_the_offset(body: dict[str, Any]) -> dict[str, Any]:
    """What the issue saw: offset 101 asked, low watermark 182 answered with REQUEST_TIMED_OUT."""
    topics = [
        {
            "Name": topic["Name"],
            "Partitions": [
                {
                    "PartitionIndex": p["PartitionIndex"],
                    "LowWatermark": 182,
                    "LeaderLogStartOffset": 182,
                    "ErrorCode": REQUEST_TIMED_OUT,
                }
                for p in topic["Partitions"]
            ],
        }
        for topic in body["Topics"]
    ]
    return {"ThrottleTimeMs": 0, "Topics": topics}


@pytest.fixture
async def broker() -> AsyncIterator[ScriptedBroker]:
    async with ScriptedBroker("orders", 1, _timed_out_past_the_offset) as started:
        yield started


@pytest.fixture
def clusters(broker: ScriptedBroker) -> dict[str, ClusterSettings]:
    return {"demo": ClusterSettings(bootstrap_servers=broker.bootstrap, request_timeout_ms=5_000)}


async def test_a_low_watermark_past_the_offset_succeeds_with_the_brokers_error_beside_it(
    broker: ScriptedBroker, executor: Executor, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    deletion_id = await insert_deletion(sessionmaker, [Target("orders", 0, 101)], timeout_ms=60_000)

    assert await executor.run_once() == 1

    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.status, row.low_watermark, row.error_code, row.attempts) == (
        "succeeded",
        182,
        "REQUEST_TIMED_OUT",
        1,
    )
    assert "low watermark 182 already covers offset 101" in (row.error_message or "")
    assert len(broker.delete_requests) == 1
    [completed] = await audit_events(sessionmaker, "deletion.completed")
    assert completed["details"]["status"] == "succeeded"
    assert completed["details"]["partitions"]["error_code"] == ["REQUEST_TIMED_OUT"]
    assert await audit_events(sessionmaker, "deletion.partition_failed") == []
