"""The executor against the emulated cluster, over the real wire, on SQLite and PostgreSQL: every state path
driven by the emulator's faults."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.kafka_timing import KAFKA_FETCH_WAIT_MS, enable_delete_records_v3
from helpers.worker import (
    Target,
    assert_chain_ok,
    audit_events,
    drive,
    insert_deletion,
    leader_of,
    log_start_offsets,
    partitions_of,
    produce,
    wait_status,
    wait_until,
)
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.worker import Executor

Maker = async_sessionmaker[AsyncSession]


@pytest.fixture
def replica_fetch_wait_ms() -> float:
    """The executor's DeleteRecords, confirm and timeout paths run at Kafka's follower fetch timing."""
    return KAFKA_FETCH_WAIT_MS


@pytest.fixture
async def orders(emulator: Any) -> str:
    emulator.create_topic("orders", partitions=4, replication_factor=3)
    await produce(emulator, "orders", dict.fromkeys(range(4), 10))
    return "orders"


async def test_deletes_every_partition_and_audits_the_summary(
    emulator: Any, executor: Executor, sessionmaker: Maker, orders: str
) -> None:
    deletion_id = await insert_deletion(sessionmaker, [Target(orders, p, 3 + p) for p in range(4)])
    assert await drive(executor, sessionmaker, deletion_id) == "succeeded"
    for p in range(4):
        assert set(log_start_offsets(emulator, orders, p).values()) == {3 + p}
    rows = await partitions_of(sessionmaker, deletion_id)
    assert [(r.status, r.low_watermark, r.attempts, r.lease_owner, r.lease_expires_at) for r in rows] == [
        ("succeeded", 3 + p, 1, "test-executor", None) for p in range(4)
    ]
    [summary] = await audit_events(sessionmaker, "deletion.completed")
    assert summary["principal"] == "Service:kafka-purge-executor"
    outcomes = summary["details"]["partitions"]
    assert outcomes["partition"] == [0, 1, 2, 3]
    assert outcomes["low_watermark"] == [3, 4, 5, 6]
    assert set(zip(outcomes["worker"], outcomes["fence"], strict=True)) == {("test-executor", 1)}
    await assert_chain_ok(sessionmaker)


async def test_paused_follower_is_leader_truncated_then_succeeded_after_resume(
    emulator: Any, executor: Executor, sessionmaker: Maker, orders: str
) -> None:
    enable_delete_records_v3(emulator)  # LeaderLogStartOffset is a v3 (LeaderOnly draft) field
    await emulator.drop_connections()  # versions are negotiated per connection
    follower = next(b for b in (1, 2, 3) if b != leader_of(emulator, orders, 0))
    emulator.pause_follower(orders, 0, follower)
    deletion_id = await insert_deletion(sessionmaker, [Target(orders, 0, 6)], timeout_ms=4_000)
    assert await drive(executor, sessionmaker, deletion_id, until=["in_progress"]) == "in_progress"
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert row.status == "leader_truncated"
    assert row.leader_log_start_offset == 6
    assert log_start_offsets(emulator, orders, 0)[follower] == 0
    emulator.resume_follower(orders, 0, follower)
    assert await drive(executor, sessionmaker, deletion_id) == "succeeded"
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.status, row.low_watermark, row.error_code) == ("succeeded", 6, None)
    assert set(log_start_offsets(emulator, orders, 0).values()) == {6}


async def test_v2_brokers_timeout_is_read_as_leader_truncated(
    emulator: Any, executor: Executor, sessionmaker: Maker, orders: str
) -> None:
    # No LeaderLogStartOffset below v3: only the broker's REQUEST_TIMED_OUT says the leader truncated.
    for broker in (1, 2, 3):
        emulator.set_delete_records_max_version(broker, 2)
    await emulator.drop_connections()  # versions are negotiated per connection (the service connected)
    follower = next(b for b in (1, 2, 3) if b != leader_of(emulator, orders, 3))
    emulator.pause_follower(orders, 3, follower)
    deletion_id = await insert_deletion(sessionmaker, [Target(orders, 3, 8)], timeout_ms=4_000)
    assert await executor.run_once() == 1
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.status, row.leader_log_start_offset) == ("leader_truncated", None)
    emulator.resume_follower(orders, 3, follower)
    assert await drive(executor, sessionmaker, deletion_id) == "succeeded"
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.low_watermark, row.leader_log_start_offset) == (8, None)
    assert set(log_start_offsets(emulator, orders, 3).values()) == {8}


async def test_followers_that_never_confirm_fail_at_the_deadline(
    emulator: Any, executor: Executor, sessionmaker: Maker, orders: str
) -> None:
    follower = next(b for b in (1, 2, 3) if b != leader_of(emulator, orders, 1))
    emulator.pause_follower(orders, 1, follower)
    deletion_id = await insert_deletion(sessionmaker, [Target(orders, 1, 4)], timeout_ms=800)
    assert await drive(executor, sessionmaker, deletion_id) == "failed"
    [row] = await partitions_of(sessionmaker, deletion_id)
    # v2 (Kafka 3.9): no LeaderLogStartOffset; the broker's REQUEST_TIMED_OUT said the leader truncated.
    assert (row.status, row.error_code, row.leader_log_start_offset) == ("failed", "REQUEST_TIMED_OUT", None)
    assert "leader truncated" in (row.error_message or "")
    [event] = await audit_events(sessionmaker, "deletion.partition_failed")
    assert event["details"]["error_code"] == "REQUEST_TIMED_OUT"


async def test_leader_only_succeeds_once_the_leader_truncated(
    emulator: Any, executor: Executor, sessionmaker: Maker, orders: str
) -> None:
    enable_delete_records_v3(emulator)
    await emulator.drop_connections()
    follower = next(b for b in (1, 2, 3) if b != leader_of(emulator, orders, 2))
    emulator.pause_follower(orders, 2, follower)
    deletion_id = await insert_deletion(sessionmaker, [Target(orders, 2, 7)], leader_only=True)
    assert await drive(executor, sessionmaker, deletion_id) == "succeeded"
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.leader_log_start_offset, row.attempts) == (7, 1)
    assert log_start_offsets(emulator, orders, 2)[follower] == 0


async def test_stopped_leader_is_retried_on_the_new_leader(
    emulator: Any, executor: Executor, sessionmaker: Maker, orders: str
) -> None:
    leader = leader_of(emulator, orders, 3)
    # The request reaches the old leader, which goes down before answering.
    emulator.inject_fault(leader, "DeleteRecords", delay_ms=400)
    deletion_id = await insert_deletion(sessionmaker, [Target(orders, 3, 5)])
    run = asyncio.create_task(executor.run_once())
    # The delayed request has arrived once its fault is taken.
    await wait_until(lambda: not emulator.state()["faults"])
    await emulator.stop_broker(leader)
    assert await run == 1
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.status, row.error_code) == ("in_progress", "NETWORK_EXCEPTION")
    assert await drive(executor, sessionmaker, deletion_id) == "succeeded"
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert row.attempts >= 2
    new_leader = leader_of(emulator, orders, 3)
    assert log_start_offsets(emulator, orders, 3)[new_leader] == 5


async def test_storage_error_once_is_retried_then_succeeds(
    emulator: Any, executor: Executor, sessionmaker: Maker, orders: str
) -> None:
    emulator.inject_fault(leader_of(emulator, orders, 0), "DeleteRecords", error="KAFKA_STORAGE_ERROR")
    deletion_id = await insert_deletion(sessionmaker, [Target(orders, 0, 2)])
    assert await executor.run_once() == 1
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.status, row.error_code) == ("in_progress", "KAFKA_STORAGE_ERROR")
    assert await drive(executor, sessionmaker, deletion_id) == "succeeded"
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.attempts, row.error_code, row.low_watermark) == (2, None, 2)


async def test_retriable_errors_until_the_deadline_fail_with_the_last_error(
    emulator: Any, executor: Executor, sessionmaker: Maker, orders: str
) -> None:
    emulator.inject_fault(
        leader_of(emulator, orders, 0), "DeleteRecords", error="KAFKA_STORAGE_ERROR", count=1000
    )
    deletion_id = await insert_deletion(sessionmaker, [Target(orders, 0, 2)], timeout_ms=500)
    assert await drive(executor, sessionmaker, deletion_id) == "failed"
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert row.error_code == "KAFKA_STORAGE_ERROR"
    assert row.attempts >= 2
    assert "Deadline passed" in (row.error_message or "")


async def test_terminal_errors_fail_with_kafkas_error_name(
    emulator: Any, executor: Executor, sessionmaker: Maker, orders: str
) -> None:
    emulator.create_topic(
        "compacted", partitions=1, replication_factor=3, configs={"cleanup.policy": "compact"}
    )
    await produce(emulator, "compacted", {0: 3})
    deletion_id = await insert_deletion(
        sessionmaker, [Target("compacted", 0, 1), Target(orders, 0, 11), Target(orders, 1, 10)]
    )
    assert await drive(executor, sessionmaker, deletion_id) == "partially_failed"
    rows = await partitions_of(sessionmaker, deletion_id)
    assert [(r.topic, r.status, r.error_code, r.attempts) for r in rows] == [
        ("compacted", "failed", "POLICY_VIOLATION", 1),
        (orders, "failed", "OFFSET_OUT_OF_RANGE", 1),
        (orders, "succeeded", None, 1),
    ]
    assert "cleanup.policy" in (rows[0].error_message or "")
    failed = await audit_events(sessionmaker, "deletion.partition_failed")
    assert sorted(e["details"]["error_code"] for e in failed) == ["OFFSET_OUT_OF_RANGE", "POLICY_VIOLATION"]
    assert log_start_offsets(emulator, orders, 0) == dict.fromkeys((1, 2, 3), 0)
    await assert_chain_ok(sessionmaker)


async def test_leader_only_against_a_v2_broker_fails_unsupported_version(
    emulator: Any, executor: Executor, sessionmaker: Maker, orders: str
) -> None:
    for broker in (1, 2, 3):
        emulator.set_delete_records_max_version(broker, 2)
    await emulator.drop_connections()  # versions are negotiated per connection (the service connected)
    deletion_id = await insert_deletion(sessionmaker, [Target(orders, 0, 2)], leader_only=True)
    assert await drive(executor, sessionmaker, deletion_id) == "failed"
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.error_code, row.attempts) == ("UNSUPPORTED_VERSION", 1)
    assert log_start_offsets(emulator, orders, 0) == dict.fromkeys((1, 2, 3), 0)


async def test_background_loop_is_woken_and_stops_cleanly(
    emulator: Any, executor: Executor, sessionmaker: Maker, orders: str
) -> None:
    await executor.start()
    try:
        assert executor.running
        deletion_id = await insert_deletion(sessionmaker, [Target(orders, p, 1) for p in range(4)])
        executor.wake()
        assert await wait_status(sessionmaker, deletion_id) == "succeeded"
    finally:
        await executor.stop()
    assert not executor.running


async def test_two_deletions_of_one_partition_in_one_batch_each_get_their_own_answer(
    emulator: Any, executor: Executor, sessionmaker: Maker, orders: str
) -> None:
    low = await insert_deletion(sessionmaker, [Target(orders, 1, 3)])
    high = await insert_deletion(sessionmaker, [Target(orders, 1, 7)])
    assert await executor.run_once() == 2
    # Both calls run at once: the lower offset's answer may already show the higher one's effect.
    [low_row] = await partitions_of(sessionmaker, low)
    [high_row] = await partitions_of(sessionmaker, high)
    assert (low_row.status, high_row.status, high_row.low_watermark) == ("succeeded", "succeeded", 7)
    assert low_row.low_watermark in (3, 7)
    assert set(log_start_offsets(emulator, orders, 1).values()) == {7}


async def test_each_leaders_outcomes_are_written_as_it_answers(
    emulator: Any, executor: Executor, sessionmaker: Maker, orders: str
) -> None:
    slow = leader_of(emulator, orders, 0)
    fast = [p for p in range(4) if leader_of(emulator, orders, p) != slow]
    assert fast, "the emulator spreads the partitions' leaders over the brokers"
    emulator.inject_fault(slow, "DeleteRecords", delay_ms=1_500)
    deletion_id = await insert_deletion(sessionmaker, [Target(orders, p, 4) for p in range(4)])
    run = asyncio.create_task(executor.run_once())

    async def written() -> dict[int, str]:
        return {row.partition: row.status for row in await partitions_of(sessionmaker, deletion_id)}

    # The slow leader answers after 1.5 s; the others' outcomes are in the database well before.
    deadline = asyncio.get_running_loop().time() + 1.2
    while {(status := await written())[p] for p in fast} != {"succeeded"}:
        assert asyncio.get_running_loop().time() < deadline, status
        await asyncio.sleep(0.02)
    assert not run.done()
    assert status[0] == "in_progress"
    assert await wait_status(sessionmaker, deletion_id, until=["in_progress"]) == "in_progress"
    assert await run == 4
    assert set((await written()).values()) == {"succeeded"}
    assert await wait_status(sessionmaker, deletion_id) == "succeeded"
    [summary] = await audit_events(sessionmaker, "deletion.completed")
    assert summary["details"]["partitions"]["partition"] == [0, 1, 2, 3]
    assert summary["details"]["partitions"]["status"] == ["succeeded"] * 4
    await assert_chain_ok(sessionmaker)
