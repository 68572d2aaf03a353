"""Replication cases over the wire: paused, stopped and restarted followers, leader moves, LeaderOnly."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaClient
from helpers.emulator.aiokafka_requests import delete_records
from helpers.emulator.dataplane_clients import confluent_delete, hws, leader_hw, lsos, produce, replica, until

from kafka_emulator import EmulatedCluster
from kafka_emulator.protocol.errors import ErrorCode


@pytest.fixture
async def client(cluster: EmulatedCluster) -> AsyncIterator[AIOKafkaClient]:
    started = AIOKafkaClient(bootstrap_servers=cluster.bootstrap)
    await started.bootstrap()
    yield started
    await started.close()


def roles(cluster: EmulatedCluster, topic: str) -> tuple[int, int, int]:
    """(leader, first follower, second follower) of partition 0."""
    leader = cluster.model.leader_of(topic, 0)
    followers = [b for b in (1, 2, 3) if b != leader]
    return leader, followers[0], followers[1]


async def test_paused_follower_makes_v2_time_out_while_the_leader_lso_moved(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    leader, paused, _ = roles(cluster, "t")
    await until(lambda: replica(cluster, "t", 0)["low_watermark"] == 0)
    cluster.pause_follower("t", 0, paused)
    result = await delete_records(client, leader, [("t", 0, 6)], 2, timeout_ms=300)
    assert result[("t", 0)] == (ErrorCode.REQUEST_TIMED_OUT, 0)
    assert lsos(cluster, "t", 0)[leader] == 6
    assert lsos(cluster, "t", 0)[paused] == 0
    referee = await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 7)], 1.5)
    assert referee[("t", 0)] in ("REQUEST_TIMED_OUT", "_TIMED_OUT")
    cluster.resume_follower("t", 0, paused)
    await until(lambda: lsos(cluster, "t", 0)[paused] == 7)
    assert (await delete_records(client, leader, [("t", 0, 7)], 2))[("t", 0)] == (0, 7)


async def test_leader_only_completes_at_once_with_a_paused_follower(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    leader, paused, _ = roles(cluster, "t")
    await until(lambda: replica(cluster, "t", 0)["low_watermark"] == 0)
    cluster.pause_follower("t", 0, paused)
    started = time.monotonic()
    result = await delete_records(client, leader, [("t", 0, 4)], 3, timeout_ms=10_000, leader_only=True)
    assert time.monotonic() - started < 2.0
    error, low_watermark, leader_lso = result[("t", 0)]
    assert (error, leader_lso) == (ErrorCode.NONE, 4)
    assert low_watermark < 4
    waited = await delete_records(client, leader, [("t", 0, 4)], 3, timeout_ms=200, leader_only=False)
    assert waited[("t", 0)] == (ErrorCode.REQUEST_TIMED_OUT, low_watermark, 4)


async def test_stopped_follower_does_not_block_and_catches_up_after_restart(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    leader, stopped, _ = roles(cluster, "t")
    await cluster.stop_broker(stopped)
    assert await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 3)]) == {("t", 0): 3}
    await produce(cluster, "t", 0, 120)
    assert (await delete_records(client, leader, [("t", 0, 117)], 2))[("t", 0)] == (0, 117)
    assert lsos(cluster, "t", 0)[stopped] == 0
    await cluster.start_broker(stopped)
    await until(lambda: lsos(cluster, "t", 0)[stopped] == 117)
    states = lambda: replica(cluster, "t", 0)["replica_states"].values()  # noqa: E731
    await until(lambda: {s["log_end_offset"] for s in states()} == {130})


async def test_leader_move_gives_not_leader_to_the_old_leader(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    old, new, _ = roles(cluster, "t")
    # The new leader must have learned the HW (from a fetch answer) or it would lag after the move.
    await until(lambda: hws(cluster, "t", 0)[new] == 10)
    epoch = replica(cluster, "t", 0)["leader_epoch"]
    cluster.move_leader("t", 0, new)
    assert replica(cluster, "t", 0)["leader_epoch"] == epoch + 1
    assert (await delete_records(client, old, [("t", 0, 2)], 2))[("t", 0)] == (
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        -1,
    )
    # Admin clients re-read metadata and find the new leader.
    assert await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 2)]) == {("t", 0): 2}
    await until(lambda: set(lsos(cluster, "t", 0).values()) == {2})


async def test_stopping_the_leader_elects_another_replica(cluster: EmulatedCluster) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    old, _, _ = roles(cluster, "t")
    await cluster.stop_broker(old)
    new = cluster.model.leader_of("t", 0)
    assert new not in (-1, old)
    await until(lambda: leader_hw(cluster, "t", 0) == 10)  # the new leader's HW catches up first
    assert await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 4)]) == {("t", 0): 4}
    await cluster.start_broker(old)
    await until(lambda: lsos(cluster, "t", 0)[old] == 4)


async def test_log_start_offset_survives_a_full_restart(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    """testLogStartOffsetCheckpoint: after every broker restarts, beforeOffset(0) answers low watermark 5."""
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    assert await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 5)]) == {("t", 0): 5}
    await until(lambda: set(lsos(cluster, "t", 0).values()) == {5})
    for broker in (1, 2, 3):
        await cluster.stop_broker(broker)
    assert cluster.model.leader_of("t", 0) == -1
    for broker in (1, 2, 3):
        await cluster.start_broker(broker)
    assert await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 0)]) == {("t", 0): 5}
    leader = cluster.model.leader_of("t", 0)
    assert (await delete_records(client, leader, [("t", 0, 0)], 2))[("t", 0)] == (0, 5)
