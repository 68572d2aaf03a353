"""Fetch over the wire (kafka-semantics.md §4): OFFSET_OUT_OF_RANGE below the LSO with -1 offsets, whole
batches from the one holding the fetch offset, reads capped at HW, long-poll; consumers reset to the LSO."""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaClient, AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as ConfluentPartition
from helpers.emulator.aiokafka_requests import delete_records, fetch
from helpers.emulator.dataplane_clients import produce, replica, until
from helpers.emulator.factories import RawFactory

from kafka_emulator import EmulatedCluster
from kafka_emulator.protocol.errors import ErrorCode


@pytest.fixture
async def client(cluster: EmulatedCluster) -> AsyncIterator[AIOKafkaClient]:
    started = AIOKafkaClient(bootstrap_servers=cluster.bootstrap)
    await started.bootstrap()
    yield started
    await started.close()


def first_base_offset(records: bytes) -> int:
    base: int = struct.unpack_from(">q", records, 0)[0]
    return base


@pytest.mark.parametrize("version", [4, 5])
async def test_fetch_below_lso_or_above_leo_is_out_of_range(
    cluster: EmulatedCluster, client: AIOKafkaClient, version: int
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    leader = cluster.model.leader_of("t", 0)
    await delete_records(client, leader, [("t", 0, 3)], 2)
    for offset in (1, 11):
        answer = await fetch(client, leader, "t", 0, offset, version=version)
        assert answer["error"] == ErrorCode.OFFSET_OUT_OF_RANGE
        assert (answer["high_watermark"], answer["last_stable_offset"]) == (-1, -1)
        if version == 5:
            assert answer["log_start_offset"] == -1


async def test_fetch_at_lso_inside_a_batch_returns_the_whole_batch(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    leader = cluster.model.leader_of("t", 0)
    await delete_records(client, leader, [("t", 0, 3)], 2)
    answer = await fetch(client, leader, "t", 0, 3)
    assert (answer["error"], answer["high_watermark"], answer["log_start_offset"]) == (0, 10, 3)
    assert first_base_offset(answer["records"]) == 0


async def test_consumers_read_only_up_to_the_high_watermark(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    leader = cluster.model.leader_of("t", 0)
    paused = next(b for b in (1, 2, 3) if b != leader)
    cluster.pause_follower("t", 0, paused)
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap, acks=1)
    await producer.start()
    await producer.send_and_wait("t", b"beyond-hw", partition=0)
    await producer.stop()
    answer = await fetch(client, leader, "t", 0, 10, max_wait_ms=0)
    assert (answer["error"], answer["high_watermark"], answer["records"]) == (0, 10, b"")
    cluster.resume_follower("t", 0, paused)
    await until(lambda: replica(cluster, "t", 0)["replica_states"][str(leader)]["high_watermark"] == 11)
    answer = await fetch(client, leader, "t", 0, 10)
    assert first_base_offset(answer["records"]) == 10


async def test_long_poll_waits_for_data_and_wakes_on_produce(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    leader = cluster.model.leader_of("t", 0)
    started = time.monotonic()
    answer = await fetch(client, leader, "t", 0, 0, max_wait_ms=300)
    assert time.monotonic() - started >= 0.25
    assert answer["records"] == b""
    pending = asyncio.create_task(fetch(client, leader, "t", 0, 0, max_wait_ms=20_000))
    await asyncio.sleep(0.05)
    started = time.monotonic()
    await produce(cluster, "t", 0, 2)
    answer = await asyncio.wait_for(pending, 10)
    assert time.monotonic() - started < 5
    assert first_base_offset(answer["records"]) == 0


async def test_aiokafka_consumer_resets_to_the_new_lso(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    await delete_records(client, cluster.model.leader_of("t", 0), [("t", 0, 3)], 2)
    consumer = AIOKafkaConsumer(bootstrap_servers=cluster.bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    try:
        partition = TopicPartition("t", 0)
        consumer.assign([partition])
        consumer.seek(partition, 1)
        offsets: list[int] = []
        deadline = time.monotonic() + 10
        while len(offsets) < 7 and time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=500)
            offsets += [m.offset for messages in batches.values() for m in messages]
    finally:
        await consumer.stop()
    assert offsets == list(range(3, 10))


async def test_librdkafka_consumer_resets_to_the_new_lso(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    await delete_records(client, cluster.model.leader_of("t", 0), [("t", 0, 3)], 2)

    def consume() -> list[int]:
        consumer = Consumer(
            {"bootstrap.servers": cluster.bootstrap, "group.id": "referee", "auto.offset.reset": "earliest"}
        )
        consumer.assign([ConfluentPartition("t", 0, 1)])
        offsets: list[int] = []
        deadline = time.monotonic() + 10
        try:
            while len(offsets) < 7 and time.monotonic() < deadline:
                message = consumer.poll(0.2)
                if message is not None and message.error() is None:
                    offsets.append(message.offset())
        finally:
            consumer.close()
        return offsets

    assert await asyncio.to_thread(consume) == list(range(3, 10))


async def test_partition_max_bytes_limits_whole_batches(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("t", 1, 3)
    for _ in range(3):
        await produce(cluster, "t", 0, 5)  # three batches of about 130 bytes
    leader = cluster.model.leader_of("t", 0)
    everything = await fetch(client, leader, "t", 0, 0)
    small = await fetch(client, leader, "t", 0, 0, max_bytes=len(everything["records"]) // 3 + 1)
    tiny = await fetch(
        client, leader, "t", 0, 7, max_bytes=1
    )  # still one whole batch: progress is guaranteed
    assert 0 < len(small["records"]) < len(everything["records"])
    assert first_base_offset(small["records"]) == 0
    assert first_base_offset(tiny["records"]) == 5


def follower_fetch(version: int, epoch: int = -1) -> dict[str, object]:
    wanted = {"Partition": 0, "CurrentLeaderEpoch": epoch, "FetchOffset": 0, "LogStartOffset": -1}
    return {
        "ReplicaId": -1,
        "MaxWaitMs": 0,
        "MinBytes": 0,
        "MaxBytes": 1 << 20,
        "SessionEpoch": -1,
        "Topics": [{"Topic": "t", "Partitions": [{**wanted, "PartitionMaxBytes": 1 << 20}]}],
    }


async def test_consumers_fetch_from_a_follower_from_v11_only(
    cluster: EmulatedCluster, raw: RawFactory
) -> None:
    """KIP-392: from v11 a consumer's fetch carries client metadata and Kafka serves it from any replica
    (up to that replica's high watermark); an older fetch must go to the leader."""
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    leader = cluster.model.leader_of("t", 0)
    follower = next(b for b in (1, 2, 3) if b != leader)
    await until(lambda: replica(cluster, "t", 0)["replica_states"][str(follower)]["high_watermark"] == 10)
    connection = await raw(follower)
    old = await connection.request("Fetch", 10, follower_fetch(10))
    assert old["Responses"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
    new = (await connection.request("Fetch", 12, follower_fetch(12)))["Responses"][0]["Partitions"][0]
    assert (new["ErrorCode"], new["HighWatermark"], new["LogStartOffset"]) == (0, 10, 0)
    assert first_base_offset(new["Records"]) == 0


async def test_a_stale_leader_epoch_is_fenced_before_leadership_is_checked(
    cluster: EmulatedCluster, raw: RawFactory
) -> None:
    """Kafka checks CurrentLeaderEpoch before leadership (Partition.getLocalLog): a follower answers a stale
    epoch with FENCED_LEADER_EPOCH, and NOT_LEADER_OR_FOLLOWER only for the current epoch."""
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    old = cluster.model.leader_of("t", 0)
    new = next(b for b in (1, 2, 3) if b != old)
    cluster.move_leader("t", 0, new)
    connection = await raw(old)
    stale = await connection.request("Fetch", 10, follower_fetch(10, epoch=0))
    assert stale["Responses"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.FENCED_LEADER_EPOCH
    current = await connection.request("Fetch", 10, follower_fetch(10, epoch=1))
    assert current["Responses"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
    epochs = {
        "Topics": [
            {"Topic": "t", "Partitions": [{"Partition": 0, "CurrentLeaderEpoch": 0, "LeaderEpoch": 0}]}
        ]
    }
    answer = await connection.request("OffsetForLeaderEpoch", 4, {"ReplicaId": -1, **epochs})
    assert answer["Topics"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.FENCED_LEADER_EPOCH
