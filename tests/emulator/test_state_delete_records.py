"""DeleteRecords semantics on the model, through the handler but without sockets (kafka-semantics §1, §8)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from helpers.emulator.record_batches import batch
from helpers.kafka_timing import SHORT_FETCH_WAIT_MS

from kafka_emulator.handlers.delete_records import delete_records_handler
from kafka_emulator.handlers.produce import produce_handler
from kafka_emulator.protocol.api import AllowAll, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import ClusterState

Result = dict[tuple[str, int], tuple[int, int, int]]


class DenyTopic:
    def __init__(self, denied: str) -> None:
        self.denied = denied

    def allowed(self, ctx: RequestContext, operation: str, resource_type: str, name: str) -> bool:
        return name != self.denied


def ctx(broker: int, api_key: int = 21, version: int = 2) -> RequestContext:
    return RequestContext(broker, api_key, version, 1, "test", "User:ANONYMOUS", "127.0.0.1")


@pytest.fixture
async def state() -> AsyncIterator[ClusterState]:
    cluster = ClusterState(
        [1, 2, 3], replication_interval_ms=2, replica_fetch_wait_max_ms=SHORT_FETCH_WAIT_MS
    )
    await cluster.start()
    yield cluster
    await cluster.stop()


async def until(condition: Callable[[], bool], limit_s: float = 5.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.005)


async def produce(state: ClusterState, topic: str, partition: int, records: int) -> None:
    handler = produce_handler(state, AllowAll())
    leader = state.leader_of(topic, partition)
    request = {
        "Acks": -1,
        "TimeoutMs": 5000,
        "TopicData": [{"Name": topic, "PartitionData": [{"Index": partition, "Records": batch(records)}]}],
    }
    response = await handler(ctx(leader, 0, 9), request)
    assert response["Responses"][0]["PartitionResponses"][0]["ErrorCode"] == 0


async def delete(
    state: ClusterState,
    broker: int,
    offsets: list[tuple[str, int, int]],
    timeout_ms: int = 2000,
    version: int = 2,
    leader_only: bool = False,
    authorizer: Any = None,
) -> Result:
    handler = delete_records_handler(state, authorizer or AllowAll())
    topics: dict[str, list[dict[str, int]]] = {}
    for topic, partition, offset in offsets:
        topics.setdefault(topic, []).append({"PartitionIndex": partition, "Offset": offset})
    request = {
        "Topics": [{"Name": t, "Partitions": p} for t, p in topics.items()],
        "TimeoutMs": timeout_ms,
        "LeaderOnly": leader_only,
    }
    response = await handler(ctx(broker, version=version), request)
    return {
        (t["Name"], p["PartitionIndex"]): (p["ErrorCode"], p["LowWatermark"], p["LeaderLogStartOffset"])
        for t in response["Topics"]
        for p in t["Partitions"]
    }


def replica_lsos(state: ClusterState, topic: str, partition: int) -> dict[int, int]:
    found = state.partition(topic, partition)
    assert found is not None
    return {b: log.log_start_offset for b, log in found.logs.items()}


async def test_happy_case_raises_every_replica_lso(state: ClusterState) -> None:
    state.create_topic("t", 1, 3)
    await produce(state, "t", 0, 10)
    leader = state.leader_of("t", 0)
    result = await delete(state, leader, [("t", 0, 2)])
    assert result[("t", 0)][:2] == (0, 2)
    await until(lambda: set(replica_lsos(state, "t", 0).values()) == {2})


async def test_error_codes_in_kafka_order(state: ClusterState) -> None:
    state.create_topic("t", 1, 3)
    state.create_topic("compacted", 1, 3, {"cleanup.policy": "compact"})
    state.create_topic("both", 1, 3, {"cleanup.policy": "compact,delete"})
    state.create_topic("__consumer_offsets", 1, 3, {"cleanup.policy": "compact"})
    await produce(state, "t", 0, 10)
    await produce(state, "both", 0, 4)
    leader = state.leader_of("t", 0)
    follower = next(b for b in (1, 2, 3) if b != leader)
    assert (await delete(state, leader, [("t", 0, 15)]))[("t", 0)] == (ErrorCode.OFFSET_OUT_OF_RANGE, -1, -1)
    assert (await delete(state, leader, [("t", 0, -2)]))[("t", 0)][0] == ErrorCode.OFFSET_OUT_OF_RANGE
    assert (await delete(state, leader, [("t", 1, 1)]))[("t", 1)][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert (await delete(state, leader, [("nope", 0, 1)]))[("nope", 0)] == (3, -1, -1)
    assert (await delete(state, follower, [("t", 0, 1)]))[("t", 0)] == (
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        -1,
        -1,
    )
    compact_leader = state.leader_of("compacted", 0)
    # POLICY_VIOLATION comes before the offset check.
    assert (await delete(state, compact_leader, [("compacted", 0, 99)]))[("compacted", 0)][0] == 44
    internal_leader = state.leader_of("__consumer_offsets", 0)
    assert (await delete(state, internal_leader, [("__consumer_offsets", 0, 0)]))[("__consumer_offsets", 0)][
        0
    ] == 17
    both_leader = state.leader_of("both", 0)
    assert (await delete(state, both_leader, [("both", 0, 2)]))[("both", 0)][:2] == (0, 2)
    assert replica_lsos(state, "t", 0)[leader] == 0


async def test_authorization_comes_first_even_for_unknown_topics(state: ClusterState) -> None:
    state.create_topic("secret", 1, 1)
    result = await delete(state, 1, [("secret", 0, 0), ("missing", 0, 0)], authorizer=DenyTopic("missing"))
    assert result[("missing", 0)] == (ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1, -1)
    denied = await delete(
        state, state.leader_of("secret", 0), [("secret", 0, 0)], authorizer=DenyTopic("secret")
    )
    assert denied[("secret", 0)][0] == ErrorCode.TOPIC_AUTHORIZATION_FAILED


async def test_minus_one_means_high_watermark_and_below_lso_is_a_no_op(state: ClusterState) -> None:
    state.create_topic("t", 1, 3)
    await produce(state, "t", 0, 10)
    leader = state.leader_of("t", 0)
    assert (await delete(state, leader, [("t", 0, 5)]))[("t", 0)][:2] == (0, 5)
    assert (await delete(state, leader, [("t", 0, 0)]))[("t", 0)][:2] == (0, 5)
    assert (await delete(state, leader, [("t", 0, -1)]))[("t", 0)][:2] == (0, 10)


async def test_duplicate_partition_last_offset_wins(state: ClusterState) -> None:
    state.create_topic("t", 1, 1)
    await produce(state, "t", 0, 10)
    result = await delete(state, state.leader_of("t", 0), [("t", 0, 7), ("t", 0, 3)])
    assert result == {("t", 0): (0, 3, 3)}


async def test_paused_follower_times_out_with_stale_low_watermark_but_lso_moved(state: ClusterState) -> None:
    state.create_topic("t", 1, 3)
    await produce(state, "t", 0, 10)
    leader = state.leader_of("t", 0)
    paused = next(b for b in (1, 2, 3) if b != leader)
    await until(lambda: state.snapshot()["topics"]["t"]["partitions"][0]["low_watermark"] == 0)
    state.pause_follower("t", 0, paused)
    result = await delete(state, leader, [("t", 0, 6)], timeout_ms=200, version=3)
    assert result[("t", 0)] == (ErrorCode.REQUEST_TIMED_OUT, 0, 6)
    lsos = replica_lsos(state, "t", 0)
    assert (lsos[leader], lsos[paused]) == (6, 0)
    state.resume_follower("t", 0, paused)
    await until(lambda: replica_lsos(state, "t", 0)[paused] == 6)
    assert (await delete(state, leader, [("t", 0, 6)]))[("t", 0)][:2] == (0, 6)


async def test_leader_only_answers_at_once_with_a_paused_follower(state: ClusterState) -> None:
    state.create_topic("t", 1, 3)
    await produce(state, "t", 0, 10)
    leader = state.leader_of("t", 0)
    paused = next(b for b in (1, 2, 3) if b != leader)
    state.pause_follower("t", 0, paused)
    started = time.monotonic()
    result = await delete(state, leader, [("t", 0, 4)], timeout_ms=5000, version=3, leader_only=True)
    assert time.monotonic() - started < 1.0
    error, low_watermark, leader_lso = result[("t", 0)]
    assert (error, leader_lso) == (0, 4)
    assert low_watermark < 4


async def test_stopped_follower_does_not_block_and_catches_up_after_restart(state: ClusterState) -> None:
    state.create_topic("t", 1, 3)
    await produce(state, "t", 0, 10)
    leader = state.leader_of("t", 0)
    stopped = next(b for b in (1, 2, 3) if b != leader)
    state.stop_broker(stopped)
    assert (await delete(state, leader, [("t", 0, 3)]))[("t", 0)][:2] == (0, 3)
    await produce(state, "t", 0, 120)
    assert (await delete(state, leader, [("t", 0, 117)]))[("t", 0)][:2] == (0, 117)
    assert replica_lsos(state, "t", 0)[stopped] == 0
    state.start_broker(stopped)
    await until(lambda: replica_lsos(state, "t", 0)[stopped] == 117)
    found = state.partition("t", 0)
    assert found is not None
    await until(lambda: found.logs[stopped].log_end_offset == 130)


async def test_leader_move_gives_not_leader_and_a_pending_request_expires(state: ClusterState) -> None:
    state.create_topic("t", 1, 3)
    await produce(state, "t", 0, 10)
    old = state.leader_of("t", 0)
    paused = next(b for b in (1, 2, 3) if b != old)
    new = next(b for b in (1, 2, 3) if b not in (old, paused))
    state.pause_follower("t", 0, paused)
    pending = asyncio.create_task(delete(state, old, [("t", 0, 5)], timeout_ms=300))
    await asyncio.sleep(0.05)
    epoch = state.snapshot()["topics"]["t"]["partitions"][0]["leader_epoch"]
    state.move_leader("t", 0, new)
    assert (await pending)[("t", 0)][0] == ErrorCode.REQUEST_TIMED_OUT
    assert state.snapshot()["topics"]["t"]["partitions"][0]["leader_epoch"] == epoch + 1
    assert (await delete(state, old, [("t", 0, 6)]))[("t", 0)][0] == ErrorCode.NOT_LEADER_OR_FOLLOWER
    state.resume_follower("t", 0, paused)
    assert (await delete(state, new, [("t", 0, 6)]))[("t", 0)][:2] == (0, 6)


async def test_stopping_the_leader_moves_leadership_with_a_new_epoch(state: ClusterState) -> None:
    state.create_topic("t", 1, 3)
    await produce(state, "t", 0, 10)
    old = state.leader_of("t", 0)
    state.stop_broker(old)
    new = state.leader_of("t", 0)
    assert new not in (-1, old)
    await until(lambda: state.snapshot()["topics"]["t"]["partitions"][0]["low_watermark"] == 0)
    assert (await delete(state, new, [("t", 0, 4)]))[("t", 0)][:2] == (0, 4)
    for broker in (1, 2, 3):
        state.stop_broker(broker)
    assert state.leader_of("t", 0) == -1
    last = state.snapshot()["topics"]["t"]["partitions"][0]["isr"]
    assert len(last) == 1  # the ISR never shrinks to nothing
    state.start_broker(old)
    assert state.leader_of("t", 0) == -1  # no unclean election: it waits for the last in-sync replica
    state.start_broker(last[0])
    assert state.leader_of("t", 0) == last[0]
    await until(lambda: set(state.snapshot()["topics"]["t"]["partitions"][0]["isr"]) == {old, last[0]})


async def test_unclean_leader_election_when_the_topic_allows_it(state: ClusterState) -> None:
    state.create_topic("t", 1, 2, {"unclean.leader.election.enable": "true"})
    await produce(state, "t", 0, 3)
    first = state.leader_of("t", 0)
    second = next(b for b in state.snapshot()["topics"]["t"]["partitions"][0]["replicas"] if b != first)
    state.stop_broker(second)
    state.stop_broker(first)
    state.start_broker(second)
    assert state.leader_of("t", 0) == second
    assert state.snapshot()["topics"]["t"]["partitions"][0]["isr"] == [second]


async def test_timeout_zero_while_waiting_answers_request_timed_out(state: ClusterState) -> None:
    state.create_topic("t", 1, 3)
    await produce(state, "t", 0, 10)
    leader = state.leader_of("t", 0)
    result = await delete(state, leader, [("t", 0, 3)], timeout_ms=0)
    assert result[("t", 0)][0] == ErrorCode.REQUEST_TIMED_OUT
    assert replica_lsos(state, "t", 0)[leader] == 3


async def test_a_trigger_checks_the_whole_request(state: ClusterState) -> None:
    """A partition whose leader moved away gets no trigger at its old leader, but a trigger on another
    partition of the same request answers it NOT_LEADER_OR_FOLLOWER, as Kafka's tryComplete does."""
    state.create_topic("t", 4, 3)
    leaders = {p: state.leader_of("t", p) for p in range(4)}
    moving, waiting = next((a, b) for a in range(4) for b in range(a + 1, 4) if leaders[a] == leaders[b])
    old = leaders[moving]
    for partition in (moving, waiting):
        await produce(state, "t", partition, 10)
    paused = next(b for b in (1, 2, 3) if b != old)
    for partition in (moving, waiting):
        state.pause_follower("t", partition, paused)
    offsets = [("t", moving, 5), ("t", waiting, 5)]
    pending = asyncio.create_task(delete(state, old, offsets, timeout_ms=20_000))
    await until(lambda: replica_lsos(state, "t", waiting)[old] == 5)
    state.move_leader("t", moving, next(b for b in (1, 2, 3) if b not in (old, paused)))
    state.resume_follower("t", waiting, paused)
    result = await pending
    assert result[("t", moving)][:2] == (ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)
    assert result[("t", waiting)][:2] == (0, 5)
