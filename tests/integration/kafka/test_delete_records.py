"""DeleteRecords through ``KafkaClusters`` against the emulated cluster: every partition's outcome."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from helpers.kafka_gateway import CLUSTER, delete_records, leader_of, log_start_offsets, produce, wait_until
from helpers.kafka_timing import KAFKA_FETCH_WAIT_MS

from app.adapters.kafka import KafkaClusters
from app.adapters.kafka.error_codes import classify, describe
from app.domain.ports import TopicPartition

TP = TopicPartition


@pytest.fixture
def delete_records_max_version() -> int:
    """These tests exercise the LeaderOnly draft: every broker serves DeleteRecords v3."""
    return 3


@pytest.fixture
def replica_fetch_wait_ms() -> float:
    """The service's DeleteRecords paths run at Kafka's follower fetch timing."""
    return KAFKA_FETCH_WAIT_MS


async def test_mixed_outcomes_in_one_call(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("orders", 3, 3)
    emulator.create_topic("compacted", 1, 3, {"cleanup.policy": "compact"})
    await produce(emulator, "orders", {0: 10, 1: 10, 2: 10})
    await produce(emulator, "compacted", {0: 4})

    outcomes = await delete_records(
        gateway,
        CLUSTER,
        {
            TP("orders", 0): 5,
            TP("orders", 1): 11,
            TP("orders", 2): -1,
            TP("compacted", 0): 1,
            TP("orders", 9): 0,
            TP("missing", 0): 0,
            TP("__consumer_offsets", 0): 0,
        },
        leader_only=False,
        timeout_ms=5_000,
    )

    assert len(outcomes) == 7
    done = outcomes[TP("orders", 0)]
    assert (done.error, done.low_watermark, done.leader_log_start_offset, done.message) == (
        "NONE",
        5,
        5,
        None,
    )
    assert outcomes[TP("orders", 2)].error == "NONE"
    assert outcomes[TP("orders", 2)].low_watermark == 10
    assert outcomes[TP("orders", 1)].error == "OFFSET_OUT_OF_RANGE"
    assert outcomes[TP("orders", 1)].low_watermark == -1
    assert outcomes[TP("compacted", 0)].error == "POLICY_VIOLATION"
    assert "cleanup.policy" in describe(outcomes[TP("compacted", 0)].error)
    assert outcomes[TP("orders", 9)].error == "UNKNOWN_TOPIC_OR_PARTITION"
    assert outcomes[TP("missing", 0)].error == "UNKNOWN_TOPIC_OR_PARTITION"
    assert outcomes[TP("__consumer_offsets", 0)].error == "INVALID_TOPIC_EXCEPTION"
    assert set(log_start_offsets(emulator, "orders", 0).values()) == {5}
    assert set(log_start_offsets(emulator, "orders", 1).values()) == {0}
    assert set(log_start_offsets(emulator, "compacted", 0).values()) == {0}


async def test_leader_only_answers_before_a_paused_follower(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 1, 3)
    await produce(emulator, "events", {0: 10})
    leader = leader_of(emulator, "events", 0)
    follower = next(b for b in (1, 2, 3) if b != leader)
    emulator.pause_follower("events", 0, follower)

    outcomes = await delete_records(
        gateway, CLUSTER, {TP("events", 0): 7}, leader_only=True, timeout_ms=30_000
    )

    outcome = outcomes[TP("events", 0)]
    assert outcome.error == "NONE"
    assert outcome.leader_log_start_offset == 7
    assert outcome.low_watermark < 7
    assert log_start_offsets(emulator, "events", 0)[follower] == 0
    emulator.resume_follower("events", 0, follower)
    await wait_until(lambda: log_start_offsets(emulator, "events", 0)[follower] == 7)


async def test_leader_only_is_never_sent_to_a_v2_broker(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 3, 3)
    await produce(emulator, "events", {0: 10, 1: 10, 2: 10})
    old = leader_of(emulator, "events", 0)
    emulator.set_delete_records_max_version(old, 2)
    await emulator.drop_connections(old)  # versions are negotiated per connection (the gateway connected)
    # Would fail the next DeleteRecords this broker receives; it must still be pending afterwards.
    emulator.inject_fault(old, "DeleteRecords", error="UNKNOWN_SERVER_ERROR")
    others = [p for p in (1, 2) if leader_of(emulator, "events", p) != old]

    offsets = {TP("events", p): 4 for p in (0, 1, 2)}
    outcomes = await delete_records(gateway, CLUSTER, offsets, leader_only=True, timeout_ms=5_000)

    refused = outcomes[TP("events", 0)]
    assert refused.error == "UNSUPPORTED_VERSION"
    assert "v3" in (refused.message or "")
    assert classify(refused.error).retriable is False
    assert set(log_start_offsets(emulator, "events", 0).values()) == {0}
    assert [f["api"] for f in emulator.state()["faults"]] == ["DeleteRecords"]
    for p in others:
        assert outcomes[TP("events", p)].error == "NONE"
        assert outcomes[TP("events", p)].leader_log_start_offset == 4


async def test_v2_broker_without_leader_only(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 1, 3)
    await produce(emulator, "events", {0: 10})
    emulator.set_delete_records_max_version(leader_of(emulator, "events", 0), 2)
    await emulator.drop_connections()  # versions are negotiated per connection (the gateway connected)

    outcomes = await delete_records(
        gateway, CLUSTER, {TP("events", 0): 6}, leader_only=False, timeout_ms=5_000
    )

    outcome = outcomes[TP("events", 0)]
    assert (outcome.error, outcome.low_watermark, outcome.leader_log_start_offset) == ("NONE", 6, -1)
    assert set(log_start_offsets(emulator, "events", 0).values()) == {6}


async def test_paused_follower_with_v2_times_out(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 1, 3)
    await produce(emulator, "events", {0: 10})
    leader = leader_of(emulator, "events", 0)
    emulator.set_delete_records_max_version(leader, 2)
    await emulator.drop_connections(leader)  # versions are negotiated per connection (the gateway connected)
    follower = next(b for b in (1, 2, 3) if b != leader)
    emulator.pause_follower("events", 0, follower)

    outcomes = await delete_records(gateway, CLUSTER, {TP("events", 0): 8}, leader_only=False, timeout_ms=200)

    outcome = outcomes[TP("events", 0)]
    assert outcome.error == "REQUEST_TIMED_OUT"
    assert outcome.low_watermark < 8
    assert classify(outcome.error).retriable
    assert log_start_offsets(emulator, "events", 0)[leader] == 8


async def test_reads_are_answered_while_a_deletion_waits_in_the_purgatory(
    emulator: Any, gateway: KafkaClusters
) -> None:
    """A broker answers a connection's requests one at a time, in order: a DeleteRecords it holds for a
    slow follower must not hold back the reads the API sends to the same broker."""
    emulator.create_topic("events", 1, 3)
    await produce(emulator, "events", {0: 10})
    leader = leader_of(emulator, "events", 0)
    emulator.pause_follower("events", 0, next(b for b in (1, 2, 3) if b != leader))
    held = asyncio.create_task(
        delete_records(gateway, CLUSTER, {TP("events", 0): 8}, leader_only=False, timeout_ms=3_000)
    )
    await wait_until(lambda: log_start_offsets(emulator, "events", 0)[leader] == 8)  # held from now on

    started = time.monotonic()
    watermarks = await gateway.high_watermarks(CLUSTER, [TP("events", 0)])  # ListOffsets to the leader
    assert time.monotonic() - started < 1.0
    assert not held.done()
    assert watermarks == {TP("events", 0): 10}
    assert (await held)[TP("events", 0)].error == "REQUEST_TIMED_OUT"


async def test_v3_without_leader_only_reports_both_offsets(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 1, 3)
    await produce(emulator, "events", {0: 10})

    outcomes = await delete_records(
        gateway, CLUSTER, {TP("events", 0): 3}, leader_only=False, timeout_ms=5_000
    )

    outcome = outcomes[TP("events", 0)]
    assert (outcome.error, outcome.low_watermark, outcome.leader_log_start_offset) == ("NONE", 3, 3)


async def test_empty_request_sends_nothing(gateway: KafkaClusters) -> None:
    assert await delete_records(gateway, CLUSTER, {}, leader_only=False, timeout_ms=1_000) == {}


async def test_leaders_are_asked_in_parallel(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 3, 3)
    await produce(emulator, "events", {0: 10, 1: 10})
    slow, fast = leader_of(emulator, "events", 0), leader_of(emulator, "events", 1)
    assert slow != fast
    emulator.inject_fault(slow, "DeleteRecords", delay_ms=2_000)

    offsets = {TP("events", 0): 2, TP("events", 1): 2}  # the slow leader's request is started first
    pending = asyncio.create_task(
        delete_records(gateway, CLUSTER, offsets, leader_only=False, timeout_ms=5_000)
    )
    await wait_until(lambda: log_start_offsets(emulator, "events", 1)[fast] == 2, timeout_s=1.5)

    assert not pending.done()  # the fast leader did not wait for the slow one
    outcomes = await pending
    assert {o.error for o in outcomes.values()} == {"NONE"}
