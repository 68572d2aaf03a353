"""A deletion that meets a new leader whose high watermark still lags the old leader's: the broker answers
OFFSET_OUT_OF_RANGE for an offset resolved below the old HW, the service sees the leader catching up
(ListOffsets on fresh metadata) and retries until it succeeds. Runs at Kafka's follower fetch timing."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.kafka_timing import KAFKA_FETCH_WAIT_MS
from helpers.worker import (
    Target,
    drive,
    insert_deletion,
    leader_of,
    log_start_offsets,
    partitions_of,
    produce,
)
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.worker import Executor

Maker = async_sessionmaker[AsyncSession]


@pytest.fixture
def replica_fetch_wait_ms() -> float:
    """The executor's DeleteRecords, confirm and timeout paths run at Kafka's follower fetch timing."""
    return KAFKA_FETCH_WAIT_MS


async def test_a_deletion_through_a_lagging_new_leader_succeeds(
    emulator: Any, executor: Executor, sessionmaker: Maker
) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    await produce(emulator, "orders", {0: 10})
    new = next(b for b in (1, 2, 3) if b != leader_of(emulator, "orders", 0))
    emulator.move_leader("orders", 0, new, high_watermark=2, catch_up_ms=1_500)
    deletion_id = await insert_deletion(sessionmaker, [Target("orders", 0, 8)], timeout_ms=8_000)
    assert await drive(executor, sessionmaker, deletion_id) == "succeeded"
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.status, row.low_watermark, row.error_code) == ("succeeded", 8, None)
    assert set(log_start_offsets(emulator, "orders", 0).values()) == {8}
    answers = [p.error for entry in emulator.request_log("DeleteRecords") for p in entry.partitions()]
    assert answers[0] == 1  # OFFSET_OUT_OF_RANGE from the lagging leader first, then success
    assert answers[-1] == 0


async def test_an_offset_above_a_caught_up_leaders_high_watermark_fails_at_once(
    emulator: Any, executor: Executor, sessionmaker: Maker
) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    await produce(emulator, "orders", {0: 10})
    deletion_id = await insert_deletion(sessionmaker, [Target("orders", 0, 50)], timeout_ms=8_000)
    assert await drive(executor, sessionmaker, deletion_id) == "failed"
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.status, row.error_code) == ("failed", "OFFSET_OUT_OF_RANGE")
    assert len(emulator.request_log("DeleteRecords")) == 1
