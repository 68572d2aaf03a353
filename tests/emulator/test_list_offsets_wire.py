"""ListOffsets over the wire (kafka-semantics.md §3): EARLIEST = LSO, LATEST = HW, timestamp search with
the -1/-1 "none" answer; aiokafka low-level requests and librdkafka's AdminClient.list_offsets."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaClient, AIOKafkaProducer
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from helpers.emulator.aiokafka_requests import delete_records, list_offsets
from helpers.emulator.dataplane_clients import (
    confluent_delete,
    confluent_list_offsets,
    produce,
    replica,
    until,
)

from kafka_emulator import EmulatedCluster
from kafka_emulator.protocol.errors import ErrorCode


@pytest.fixture
async def client(cluster: EmulatedCluster) -> AsyncIterator[AIOKafkaClient]:
    started = AIOKafkaClient(bootstrap_servers=cluster.bootstrap)
    await started.bootstrap()
    yield started
    await started.close()


async def both(
    cluster: EmulatedCluster, client: AIOKafkaClient, query: int, version: int = 1
) -> tuple[int, int]:
    """The offset aiokafka (low level) and librdkafka get for partition 0 of topic t."""
    leader = cluster.model.leader_of("t", 0)
    error, _, offset = (await list_offsets(client, leader, [("t", 0, query)], version))[("t", 0)]
    assert error == 0
    referee = await asyncio.to_thread(confluent_list_offsets, cluster.bootstrap, [("t", 0, query)])
    return offset, int(referee[("t", 0)])


@pytest.mark.parametrize("version", [1, 2])
async def test_offsets_for_times_after_delete_records(
    cluster: EmulatedCluster, client: AIOKafkaClient, version: int
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10, first_ts=1_000)
    assert await both(cluster, client, 0, version) == (0, 0)
    assert await both(cluster, client, 1_003, version) == (3, 3)
    await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 5)])
    # The LSO sits inside the single batch: the answer is the first offset >= LSO with ts >= t.
    assert await both(cluster, client, 0, version) == (5, 5)
    assert await both(cluster, client, 1_007, version) == (7, 7)
    leader = cluster.model.leader_of("t", 0)
    await delete_records(client, leader, [("t", 0, -1)], 2)
    assert (await list_offsets(client, leader, [("t", 0, 0)], version))[("t", 0)] == (0, -1, -1)
    assert await asyncio.to_thread(confluent_list_offsets, cluster.bootstrap, [("t", 0, 0)]) == {("t", 0): -1}


async def test_timestamp_after_the_last_record_answers_none(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10, first_ts=1_000)
    leader = cluster.model.leader_of("t", 0)
    assert (await list_offsets(client, leader, [("t", 0, 5_000)]))[("t", 0)] == (0, -1, -1)


async def test_earliest_is_lso_and_latest_is_the_high_watermark(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 4)])
    assert await both(cluster, client, -2) == (4, 4)
    assert await both(cluster, client, -1) == (10, 10)
    leader = cluster.model.leader_of("t", 0)
    paused = next(b for b in (1, 2, 3) if b != leader)
    cluster.pause_follower("t", 0, paused)
    await cluster_append(cluster, leader, 5)
    await until(lambda: replica(cluster, "t", 0)["replica_states"][str(leader)]["log_end_offset"] == 15)
    # A paused (still in-sync) follower holds the high watermark: LATEST stays below the leader's LEO.
    assert await both(cluster, client, -1) == (10, 10)
    cluster.resume_follower("t", 0, paused)
    await until(lambda: replica(cluster, "t", 0)["replica_states"][str(leader)]["high_watermark"] == 15)
    assert await both(cluster, client, -1) == (15, 15)


async def cluster_append(cluster: EmulatedCluster, leader: int, count: int) -> None:
    """acks=1 produce straight to the leader (an acks=all producer would wait for the paused follower)."""
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap, acks=1)
    await producer.start()
    try:
        for i in range(count):
            await producer.send_and_wait("t", b"more-%d" % i, partition=0, timestamp_ms=2_000 + i)
    finally:
        await producer.stop()


async def test_max_timestamp_with_librdkafka(cluster: EmulatedCluster) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10, first_ts=1_000)

    def max_timestamp() -> tuple[int, int]:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        futures = admin.list_offsets({TopicPartition("t", 0): OffsetSpec.max_timestamp()}, request_timeout=10)
        result = next(iter(futures.values())).result()
        return result.offset, result.timestamp

    assert await asyncio.to_thread(max_timestamp) == (9, 1_009)


async def test_errors(cluster: EmulatedCluster, client: AIOKafkaClient) -> None:
    cluster.create_topic("t", 1, 3)
    leader = cluster.model.leader_of("t", 0)
    follower = next(b for b in (1, 2, 3) if b != leader)
    assert (await list_offsets(client, follower, [("t", 0, -1)]))[("t", 0)][
        0
    ] == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert (await list_offsets(client, leader, [("t", 3, -1)]))[("t", 3)][
        0
    ] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    # MAX_TIMESTAMP (-3) needs v7: older versions get UNSUPPORTED_VERSION for that partition.
    assert (await list_offsets(client, leader, [("t", 0, -3)]))[("t", 0)] == (
        ErrorCode.UNSUPPORTED_VERSION,
        -1,
        -1,
    )
