"""Replication model: ISR shrink after the lag limit, acks=all, min.insync.replicas, idle convergence."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from helpers.emulator.dataplane_clients import until
from helpers.emulator.record_batches import batch
from helpers.kafka_timing import SHORT_FETCH_WAIT_MS

from kafka_emulator.handlers.produce import produce_handler
from kafka_emulator.protocol.api import AllowAll, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import ClusterState


@pytest.fixture
async def state() -> AsyncIterator[ClusterState]:
    cluster = ClusterState(
        [1, 2, 3],
        replication_interval_ms=2,
        replica_lag_time_max_ms=300,
        replica_fetch_wait_max_ms=SHORT_FETCH_WAIT_MS,
    )
    await cluster.start()
    yield cluster
    await cluster.stop()


async def produce(
    state: ClusterState, records: int, acks: int = -1, timeout_ms: int = 5000
) -> tuple[int, int]:
    """(error, base offset) of producing ``records`` records to t-0 on its leader."""
    leader = state.leader_of("t", 0)
    ctx = RequestContext(leader, 0, 9, 1, "test", "User:ANONYMOUS", "127.0.0.1")
    request = {
        "Acks": acks,
        "TimeoutMs": timeout_ms,
        "TopicData": [{"Name": "t", "PartitionData": [{"Index": 0, "Records": batch(records)}]}],
    }
    response = await produce_handler(state, AllowAll())(ctx, request)
    partition = response["Responses"][0]["PartitionResponses"][0]
    return partition["ErrorCode"], partition["BaseOffset"]


def partition_state(state: ClusterState) -> dict[str, object]:
    found: dict[str, object] = state.snapshot()["topics"]["t"]["partitions"][0]
    return found


async def test_acks_all_waits_until_a_paused_follower_leaves_the_isr(state: ClusterState) -> None:
    state.create_topic("t", 1, 3)
    assert await produce(state, 5) == (ErrorCode.NONE, 0)
    leader = state.leader_of("t", 0)
    paused = next(b for b in (1, 2, 3) if b != leader)
    state.pause_follower("t", 0, paused)
    started = time.monotonic()
    assert await produce(state, 5) == (ErrorCode.NONE, 5)
    assert time.monotonic() - started >= 0.25  # held until the 300 ms lag limit passed
    assert paused not in partition_state(state)["isr"]  # type: ignore[operator]
    state.resume_follower("t", 0, paused)
    await asyncio.sleep(0.05)
    assert paused in partition_state(state)["isr"]  # type: ignore[operator]


async def test_acks_all_times_out_but_keeps_the_records(state: ClusterState) -> None:
    state.create_topic("t", 1, 3)
    leader = state.leader_of("t", 0)
    state.pause_follower("t", 0, next(b for b in (1, 2, 3) if b != leader))
    assert await produce(state, 4, timeout_ms=50) == (ErrorCode.REQUEST_TIMED_OUT, -1)
    assert partition_state(state)["replica_states"][str(leader)]["log_end_offset"] == 4  # type: ignore[index]
    assert await produce(state, 1, acks=1) == (ErrorCode.NONE, 4)
    assert (await produce(state, 1, acks=2))[0] == ErrorCode.INVALID_REQUIRED_ACKS


async def test_min_insync_replicas_refuses_appends(state: ClusterState) -> None:
    state.create_topic("t", 1, 3, {"min.insync.replicas": "3"})
    follower = next(b for b in (1, 2, 3) if b != state.leader_of("t", 0))
    state.stop_broker(follower)
    assert await produce(state, 1) == (ErrorCode.NOT_ENOUGH_REPLICAS, -1)


async def test_an_idle_cluster_has_no_replication_work(state: ClusterState) -> None:
    state.create_topic("t", 50, 3)
    await produce(state, 3)
    await until(lambda: state.replicator.pending == 0)
    states = partition_state(state)["replica_states"].values()  # type: ignore[attr-defined]
    assert {(s["log_end_offset"], s["high_watermark"]) for s in states} == {(3, 3)}


async def test_a_former_leader_drops_its_unreplicated_tail(state: ClusterState) -> None:
    state.create_topic("t", 1, 3)
    old = state.leader_of("t", 0)
    assert await produce(state, 1, acks=1) == (ErrorCode.NONE, 0)
    state.stop_broker(old)  # before any follower fetched offset 0
    new = state.leader_of("t", 0)
    assert await produce(state, 6) == (ErrorCode.NONE, 0)  # the new leader reuses offset 0
    state.start_broker(old)
    await until(lambda: state.replicator.pending == 0)
    found = state.partition("t", 0)
    assert found is not None
    assert found.logs[old].read(0, 1 << 20, 6) == found.logs[new].read(0, 1 << 20, 6)
    assert found.logs[old].log_end_offset == 6
    assert old in found.isr()


async def test_a_lagging_new_leader_keeps_followers_lso(state: ClusterState) -> None:
    """A follower that adopted a deletion keeps its higher LSO under a leader that had not."""
    state.create_topic("t", 1, 3)
    await produce(state, 4)
    leader = state.leader_of("t", 0)
    lagging, other = (b for b in (1, 2, 3) if b != leader)
    await until(lambda: state.replicator.pending == 0)
    state.pause_follower("t", 0, lagging)
    found = state.partition("t", 0)
    assert found is not None
    found.logs[leader].increment_log_start_offset(2)
    state.replicator.mark(found)
    await until(lambda: found.logs[other].log_start_offset == 2)
    state.move_leader("t", 0, lagging)
    await until(lambda: state.replicator.pending == 0)
    lsos = {b: log.log_start_offset for b, log in found.logs.items()}
    assert lsos == {leader: 2, other: 2, lagging: 0}
    assert found.low_watermark() == 0


async def test_moving_the_leader_outside_the_isr_is_an_unclean_election(state: ClusterState) -> None:
    state.create_topic("t", 1, 3)
    await produce(state, 2)
    leader = state.leader_of("t", 0)
    target = next(b for b in (1, 2, 3) if b != leader)
    state.stop_broker(target)
    assert target not in partition_state(state)["isr"]  # type: ignore[operator]
    state.start_broker(target)
    state.move_leader("t", 0, target)  # before it fetched: not in the ISR yet
    assert state.leader_of("t", 0) == target
    assert partition_state(state)["isr"] == [target]
    await until(lambda: len(partition_state(state)["isr"]) == 3)  # type: ignore[arg-type]
