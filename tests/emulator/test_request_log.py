"""The emulator's request log through its Python API, fed by real clients: aiokafka's low-level requests
and librdkafka's AdminClient.delete_records, each with its own client id."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaClient
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient
from helpers.emulator.aiokafka_requests import delete_records
from helpers.emulator.dataplane_clients import produce
from helpers.emulator.factories import ClusterFactory

from kafka_emulator import EmulatedCluster
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.request_log import LoggedPartition


@pytest.fixture
async def client(cluster: EmulatedCluster) -> AsyncIterator[AIOKafkaClient]:
    started = AIOKafkaClient(bootstrap_servers=cluster.bootstrap, client_id="purge-a")
    await started.bootstrap()
    yield started
    await started.close()


def librdkafka_delete(bootstrap: str, client_id: str, offsets: list[tuple[str, int, int]]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": client_id})
    futures = admin.delete_records(
        [TopicPartition(t, p, o) for t, p, o in offsets], request_timeout=10, operation_timeout=10
    )
    for future in futures.values():
        future.result()


async def test_aiokafka_request_is_recorded_with_its_partitions_and_answers(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("logged", 2, 3)
    for partition in (0, 1):
        await produce(cluster, "logged", partition, 5)
    leader = cluster.model.leader_of("logged", 0)
    cluster.move_leader("logged", 1, leader)
    offsets = [("logged", 0, 3), ("logged", 1, 9), ("missing", 0, 1)]
    await delete_records(client, leader, offsets, 2)
    [entry] = cluster.request_log("DeleteRecords", client_id="purge-a")
    assert (entry.broker_id, entry.api, entry.api_version, entry.client_id) == (
        leader,
        "DeleteRecords",
        2,
        "purge-a",
    )
    assert entry.answered_monotonic is not None
    assert entry.answered_wall is not None
    assert entry.received_monotonic <= entry.answered_monotonic
    assert entry.received_wall <= entry.answered_wall
    assert entry.partitions() == [
        LoggedPartition("logged", 0, 3, ErrorCode.NONE, 3),
        LoggedPartition("logged", 1, 9, ErrorCode.OFFSET_OUT_OF_RANGE, -1),
        LoggedPartition("missing", 0, 1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
    ]


async def test_librdkafka_and_aiokafka_requests_are_told_apart_by_client_id(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("mixed", 3, 3)
    for partition in range(3):
        await produce(cluster, "mixed", partition, 4)
    await asyncio.to_thread(
        librdkafka_delete, cluster.bootstrap, "purge-b", [("mixed", p, 2) for p in range(3)]
    )
    leader = cluster.model.leader_of("mixed", 0)
    await delete_records(client, leader, [("mixed", 0, 4)], 3)

    by_librdkafka = cluster.request_log(client_id="purge-b")
    sent = sorted((p.topic, p.partition, p.offset) for e in by_librdkafka for p in e.partitions())
    assert sent == [("mixed", 0, 2), ("mixed", 1, 2), ("mixed", 2, 2)]
    assert all(
        p.error == ErrorCode.NONE and p.low_watermark == 2 for e in by_librdkafka for p in e.partitions()
    )
    # librdkafka sends one request per leader, to that leader.
    assert {e.broker_id for e in by_librdkafka} == {cluster.model.leader_of("mixed", p) for p in range(3)}
    [by_aiokafka] = cluster.request_log(client_id="purge-a")
    assert by_aiokafka.api_version == 3
    assert by_aiokafka.partitions() == [LoggedPartition("mixed", 0, 4, ErrorCode.NONE, 4)]
    everything = cluster.request_log()
    assert [e.seq for e in everything] == sorted(e.seq for e in everything)
    assert len(everything) == len(by_librdkafka) + 1


async def test_injected_fault_and_delay_are_what_the_log_shows(
    cluster: EmulatedCluster, client: AIOKafkaClient
) -> None:
    cluster.create_topic("faulty", 1, 3)
    await produce(cluster, "faulty", 0, 3)
    leader = cluster.model.leader_of("faulty", 0)
    cluster.inject_fault(leader, "DeleteRecords", "KAFKA_STORAGE_ERROR", delay_ms=50)
    await delete_records(client, leader, [("faulty", 0, 1)], 2)
    [entry] = cluster.request_log()
    assert entry.partitions() == [LoggedPartition("faulty", 0, 1, ErrorCode.KAFKA_STORAGE_ERROR, -1)]
    assert entry.answered_monotonic is not None
    assert entry.answered_monotonic - entry.received_monotonic >= 0.05


async def test_only_chosen_apis_are_recorded(make_cluster: ClusterFactory) -> None:
    cluster = await make_cluster(brokers=1, request_log_apis=["DeleteRecords", "Metadata"])
    client = AIOKafkaClient(bootstrap_servers=cluster.bootstrap, client_id="meta")
    await client.bootstrap()
    await client.close()
    metadata = cluster.request_log("Metadata", client_id="meta")
    assert metadata
    assert all(e.api == "Metadata" and e.partitions() == [] for e in metadata)
    assert cluster.request_log(None) == metadata
    with pytest.raises(ValueError, match="ApiVersions requests are not recorded"):
        cluster.request_log("ApiVersions")
    with pytest.raises(ValueError, match="unknown API"):
        cluster.request_log("NoSuchApi")


async def test_metadata_is_not_recorded_by_default(cluster: EmulatedCluster, client: AIOKafkaClient) -> None:
    assert cluster.request_log(None) == []
    assert cluster.requests.api_keys == {21}


async def test_the_log_keeps_the_newest_requests_up_to_its_bound(make_cluster: ClusterFactory) -> None:
    cluster = await make_cluster(brokers=1, request_log_max=3)
    cluster.create_topic("bounded", 1, 1)
    await produce(cluster, "bounded", 0, 10)
    client = AIOKafkaClient(bootstrap_servers=cluster.bootstrap, client_id="bound")
    await client.bootstrap()
    try:
        for offset in range(1, 6):
            await delete_records(client, 1, [("bounded", 0, offset)], 2)
    finally:
        await client.close()
    kept = cluster.request_log()
    assert [e.partitions()[0].offset for e in kept] == [3, 4, 5]
    assert [e.seq for e in kept] == [3, 4, 5]
    assert cluster.requests.dropped == 2
    cluster.clear_request_log()
    assert cluster.request_log() == []
    assert cluster.requests.dropped == 0


async def test_the_log_also_bounds_the_partitions_it_holds(make_cluster: ClusterFactory) -> None:
    cluster = await make_cluster(brokers=1, request_log_max_partitions=5)
    cluster.create_topic("wide", 4, 1)
    client = AIOKafkaClient(bootstrap_servers=cluster.bootstrap, client_id="wide")
    await client.bootstrap()
    try:
        for count in (2, 2, 1, 4, 6):
            await delete_records(client, 1, [("wide", p % 4, 0) for p in range(count)], 2)
    finally:
        await client.close()
    # After each request: [2], [2, 2], [2, 2, 1], [1, 4], [6] (the newest stays, even over the bound).
    assert [len(e.partitions()) for e in cluster.request_log()] == [6]
    assert cluster.requests.dropped == 4


def test_a_log_needs_room_and_known_apis() -> None:
    with pytest.raises(ValueError, match="at least one"):
        EmulatedCluster(brokers=1, request_log_max=0)
    with pytest.raises(ValueError, match="at least one"):
        EmulatedCluster(brokers=1, request_log_max_partitions=0)
    with pytest.raises(ValueError, match="unknown API"):
        EmulatedCluster(brokers=1, request_log_apis=["Nope"])
