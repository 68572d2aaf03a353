"""Behaviour a real Apache Kafka 3.9 cluster shows and the emulator reproduces by default, checked through
real clients (librdkafka via confluent-kafka, aiokafka): DeleteRecords up to v2, follower fetches that wait
in the fetch purgatory (``replica.fetch.wait.max.ms``), a new leader whose high watermark lags, a crashed
broker that stays registered until its session times out, and leader epochs that move when a partition goes
offline and comes back.

These clusters use the emulator's defaults (Kafka's 500 ms fetch wait) unless a test says otherwise."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaClient
from helpers.emulator.aiokafka_requests import delete_records, list_offsets
from helpers.emulator.dataplane_clients import confluent_delete, hws, lsos, produce, replica, until
from helpers.emulator.wire_client import RawConnection

from kafka_emulator import EmulatedCluster
from kafka_emulator.protocol.errors import ErrorCode

ClusterFactory = Callable[..., Awaitable[EmulatedCluster]]


@pytest.fixture
async def clients() -> AsyncIterator[Callable[[EmulatedCluster], Awaitable[AIOKafkaClient]]]:
    opened: list[AIOKafkaClient] = []

    async def open_client(cluster: EmulatedCluster) -> AIOKafkaClient:
        client = AIOKafkaClient(bootstrap_servers=cluster.bootstrap)
        await client.bootstrap()
        opened.append(client)
        return client

    yield open_client
    for client in opened:
        await client.close()


def followers(cluster: EmulatedCluster, topic: str) -> list[int]:
    leader = cluster.model.leader_of(topic, 0)
    return [b for b in (1, 2, 3) if b != leader]


async def test_brokers_serve_delete_records_up_to_v2_unless_v3_is_enabled(
    make_cluster: ClusterFactory,
) -> None:
    cluster = await make_cluster(brokers=2, delete_records_max_version={2: 3})
    for broker, highest in ((1, 2), (2, 3)):
        host, port = cluster.brokers[broker]
        connection = await RawConnection.open(host, port)
        try:
            body = {"ClientSoftwareName": "t", "ClientSoftwareVersion": "1"}
            response = await connection.request("ApiVersions", 3, body)
        finally:
            await connection.close()
        ranges = {api["ApiKey"]: api["MaxVersion"] for api in response["ApiKeys"]}
        assert ranges[21] == highest


async def test_an_idle_followers_fetch_learns_a_new_log_start_only_when_its_wait_expires(
    make_cluster: ClusterFactory, clients: Any
) -> None:
    cluster = await make_cluster(brokers=3)
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    # The followers learn the HW when their parked fetch returns: a fetch wait (~500 ms) after the produce.
    await until(lambda: set(hws(cluster, "t", 0).values()) == {10})
    client = await clients(cluster)
    leader = cluster.model.leader_of("t", 0)
    started = time.monotonic()
    # A short TimeoutMs ends before the followers' fetches return: the leader truncated, nobody confirmed.
    assert (await delete_records(client, leader, [("t", 0, 4)], 2, timeout_ms=100))[("t", 0)] == (
        ErrorCode.REQUEST_TIMED_OUT,
        0,
    )
    assert set(lsos(cluster, "t", 0).values()) == {0, 4}
    # The followers learn the new log start when their parked fetch returns, with no append to wake it:
    # within one fetch wait (500 ms) of the truncation, plus scheduling slack on a loaded machine.
    await until(lambda: set(lsos(cluster, "t", 0).values()) == {4}, limit_s=1.5)
    assert time.monotonic() - started > 0.1
    assert await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 4)]) == {("t", 0): 4}


async def test_an_append_wakes_the_followers_fetch_at_once(
    make_cluster: ClusterFactory, clients: Any
) -> None:
    cluster = await make_cluster(brokers=3)
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    await until(lambda: set(hws(cluster, "t", 0).values()) == {10})
    client = await clients(cluster)
    leader = cluster.model.leader_of("t", 0)
    started = time.monotonic()
    pending = asyncio.ensure_future(delete_records(client, leader, [("t", 0, 6)], 2, timeout_ms=5_000))
    await asyncio.sleep(0.02)
    await produce(cluster, "t", 0, 1)  # acks=all: the followers' fetches return with the record and the LSO
    assert (await pending)[("t", 0)] == (ErrorCode.NONE, 6)
    assert time.monotonic() - started < 0.3


async def test_a_new_leader_with_a_lagging_high_watermark(make_cluster: ClusterFactory, clients: Any) -> None:
    cluster = await make_cluster(brokers=3, replica_fetch_wait_max_ms=20)
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    await until(lambda: set(hws(cluster, "t", 0).values()) == {10})
    new = followers(cluster, "t")[0]
    epoch = replica(cluster, "t", 0)["leader_epoch"]
    # The lag lasts long enough for librdkafka to bootstrap on a loaded machine before it ends.
    cluster.move_leader("t", 0, new, high_watermark=4, catch_up_ms=4_000)
    client = await clients(cluster)
    # ListOffsets LATEST: LEADER_NOT_AVAILABLE below v5, OFFSET_NOT_AVAILABLE from v5.
    assert (await list_offsets(client, new, [("t", 0, -1)]))[("t", 0)][0] == ErrorCode.LEADER_NOT_AVAILABLE
    host, port = cluster.brokers[new]
    connection = await RawConnection.open(host, port)
    try:
        query = {"PartitionIndex": 0, "CurrentLeaderEpoch": epoch + 1, "Timestamp": -1}
        body = {"ReplicaId": -1, "IsolationLevel": 0, "Topics": [{"Name": "t", "Partitions": [query]}]}
        answer = await connection.request("ListOffsets", 5, body)
    finally:
        await connection.close()
    assert answer["Topics"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.OFFSET_NOT_AVAILABLE
    # An offset resolved from the old leader's HW is out of range on the new one until it catches up.
    assert await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 8)]) == {
        ("t", 0): "OFFSET_OUT_OF_RANGE"
    }
    await until(lambda: hws(cluster, "t", 0)[new] == 10)
    assert await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 8)]) == {("t", 0): 8}


async def test_a_crashed_follower_stays_registered_until_its_session_times_out(
    make_cluster: ClusterFactory, clients: Any
) -> None:
    cluster = await make_cluster(brokers=3, replica_fetch_wait_max_ms=20, broker_session_timeout_ms=1_500)
    cluster.create_topic("t", 1, 3)
    await produce(cluster, "t", 0, 10)
    crashed = followers(cluster, "t")[0]
    await cluster.kill_broker(crashed)
    client = await clients(cluster)
    await client.force_metadata_update()
    assert crashed in {broker.nodeId for broker in client.cluster.brokers()}
    leader = cluster.model.leader_of("t", 0)
    # Its replica still counts for the low watermark, and it does not fetch: the deletion cannot confirm.
    assert (await delete_records(client, leader, [("t", 0, 3)], 2, timeout_ms=200))[("t", 0)] == (
        ErrorCode.REQUEST_TIMED_OUT,
        0,
    )
    assert crashed in replica(cluster, "t", 0)["isr"]
    await until(lambda: crashed not in cluster.model.alive, limit_s=3)
    assert (await delete_records(client, leader, [("t", 0, 3)], 2, timeout_ms=2_000))[("t", 0)] == (0, 3)
    await client.force_metadata_update()
    assert crashed not in {broker.nodeId for broker in client.cluster.brokers()}
    await cluster.start_broker(crashed)
    await until(lambda: lsos(cluster, "t", 0)[crashed] == 3)


async def test_leader_epoch_moves_when_a_partition_goes_offline_and_comes_back(
    make_cluster: ClusterFactory,
) -> None:
    cluster = await make_cluster(brokers=2)
    cluster.create_topic("solo", 1, 1)
    [broker] = replica(cluster, "solo", 0)["replicas"]
    epoch = replica(cluster, "solo", 0)["leader_epoch"]
    await cluster.stop_broker(broker)
    assert (replica(cluster, "solo", 0)["leader"], replica(cluster, "solo", 0)["leader_epoch"]) == (
        -1,
        epoch + 1,
    )
    await cluster.start_broker(broker)
    assert (replica(cluster, "solo", 0)["leader"], replica(cluster, "solo", 0)["leader_epoch"]) == (
        broker,
        epoch + 2,
    )
