"""Fault controls over real sockets: injected errors and delays, dropped connections, stopped brokers,
and the broker's answer when a handler fails."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import confluent_kafka
import confluent_kafka.admin
import pytest
from aiokafka import AIOKafkaClient
from helpers.emulator.factories import RawFactory
from helpers.emulator.wire_client import RawConnection

from kafka_emulator import EmulatedCluster
from kafka_emulator.dispatch import Dispatcher
from kafka_emulator.faults import FaultInjector
from kafka_emulator.protocol.api import HandlerRegistry, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.server import BrokerServer

STORAGE = ErrorCode.KAFKA_STORAGE_ERROR


def _delete_body(topic: str, partitions: list[int], offset: int = 0) -> Message:
    parts = [{"PartitionIndex": p, "Offset": offset} for p in partitions]
    return {"Topics": [{"Name": topic, "Partitions": parts}], "TimeoutMs": 1000, "LeaderOnly": False}


async def test_delete_records_fault_fails_every_partition_then_clears(
    cluster: EmulatedCluster, raw: RawFactory
) -> None:
    cluster.create_topic("faulty", 3)
    cluster.inject_fault(1, "DeleteRecords", "KAFKA_STORAGE_ERROR", count=2)
    connection = await raw(1)
    for _ in range(2):
        response = await connection.request("DeleteRecords", 3, _delete_body("faulty", [0, 1, 2]))
        partitions = response["Topics"][0]["Partitions"]
        assert [p["PartitionIndex"] for p in partitions] == [0, 1, 2]
        for p in partitions:
            assert (p["ErrorCode"], p["LowWatermark"], p["LeaderLogStartOffset"]) == (STORAGE, -1, -1)
    leader_of_0 = cluster.model.leader_of("faulty", 0)
    response = await (await raw(leader_of_0)).request("DeleteRecords", 3, _delete_body("faulty", [0]))
    assert response["Topics"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.NONE
    assert cluster.state()["faults"] == []


async def test_confluent_kafka_sees_the_injected_delete_records_error(cluster: EmulatedCluster) -> None:
    cluster.create_topic("faulty-rdkafka", 1, replication_factor=1)
    leader = cluster.model.leader_of("faulty-rdkafka", 0)
    cluster.inject_fault(leader, "DeleteRecords", int(STORAGE))
    admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": cluster.bootstrap})
    futures = admin.delete_records([confluent_kafka.TopicPartition("faulty-rdkafka", 0, 0)])
    (future,) = futures.values()
    with pytest.raises(confluent_kafka.KafkaException) as failure:
        await asyncio.to_thread(future.result, 10)
    assert failure.value.args[0].code() == confluent_kafka.KafkaError.KAFKA_STORAGE_ERROR


async def test_delay_only_fault_then_normal_answer(cluster: EmulatedCluster, raw: RawFactory) -> None:
    cluster.inject_fault(2, "ApiVersions", delay_ms=300)
    connection = await raw(2)
    started = time.monotonic()
    assert (await connection.request("ApiVersions", 1))["ErrorCode"] == 0
    assert time.monotonic() - started >= 0.29
    assert (await (await raw(1)).request("ApiVersions", 1))["ErrorCode"] == 0


async def test_faults_apply_to_one_broker_only(cluster: EmulatedCluster, raw: RawFactory) -> None:
    cluster.inject_fault(3, "Metadata", "NOT_CONTROLLER")
    on_1 = await (await raw(1)).request("Metadata", 9, {"Topics": [{"Name": "x"}]})
    on_3 = await (await raw(3)).request("Metadata", 9, {"Topics": [{"Name": "x"}]})
    assert on_1["Brokers"]
    assert on_3 == {**on_3, "Brokers": [], "ControllerId": -1}
    assert on_3["Topics"][0]["ErrorCode"] == ErrorCode.NOT_CONTROLLER


@pytest.mark.parametrize(
    ("api", "version", "request_body", "check"),
    [
        (
            "ListOffsets",
            7,
            {"Topics": [{"Name": "t", "Partitions": [{"PartitionIndex": 2, "Timestamp": -2}]}]},
            lambda r: (
                r["Topics"][0]["Partitions"][0] | {"LeaderEpoch": 0}
                == {"PartitionIndex": 2, "ErrorCode": 56, "Timestamp": -1, "Offset": -1, "LeaderEpoch": 0}
            ),
        ),
        (
            "Produce",
            9,
            {"Acks": -1, "TimeoutMs": 10, "TopicData": [{"Name": "t", "PartitionData": [{"Index": 1}]}]},
            lambda r: (
                r["Responses"][0]["PartitionResponses"][0]["ErrorCode"] == 56
                and r["Responses"][0]["PartitionResponses"][0]["BaseOffset"] == -1
            ),
        ),
        (
            "Fetch",
            11,
            {"Topics": [{"Topic": "t", "Partitions": [{"Partition": 0, "FetchOffset": 5}]}]},
            lambda r: r["ErrorCode"] == 56 and r["Responses"][0]["Partitions"][0]["HighWatermark"] == -1,
        ),
        (
            "Fetch",
            13,
            {"Topics": [{"TopicId": b"\x01" * 16, "Partitions": [{"Partition": 0}]}]},
            lambda r: r["ErrorCode"] == 56 and r["Responses"] == [],
        ),
        (
            "OffsetCommit",
            8,
            {"GroupId": "g", "Topics": [{"Name": "t", "Partitions": [{"PartitionIndex": 0}]}]},
            lambda r: r["Topics"][0]["Partitions"] == [{"PartitionIndex": 0, "ErrorCode": 56}],
        ),
        (
            "OffsetFetch",
            7,
            {"GroupId": "g", "Topics": [{"Name": "t", "PartitionIndexes": [0, 1]}]},
            lambda r: (
                r["ErrorCode"] == 56
                and [p["CommittedOffset"] for p in r["Topics"][0]["Partitions"]] == [-1, -1]
            ),
        ),
        (
            "OffsetFetch",
            8,
            {"Groups": [{"GroupId": "g", "Topics": None}]},
            lambda r: r["Groups"] == [{"GroupId": "g", "Topics": [], "ErrorCode": 56}],
        ),
        (
            "FindCoordinator",
            3,
            {"Key": "g"},
            lambda r: (r["ErrorCode"], r["NodeId"], r["Port"]) == (56, -1, -1),
        ),
        (
            "FindCoordinator",
            4,
            {"CoordinatorKeys": ["g1", "g2"]},
            lambda r: [(c["Key"], c["ErrorCode"]) for c in r["Coordinators"]] == [("g1", 56), ("g2", 56)],
        ),
        ("Heartbeat", 4, {"GroupId": "g"}, lambda r: r["ErrorCode"] == 56),
    ],
)
async def test_error_response_shapes(
    cluster: EmulatedCluster, raw: RawFactory, api: str, version: int, request_body: Message, check: object
) -> None:
    cluster.inject_fault(1, api, "KAFKA_STORAGE_ERROR")
    response = await (await raw(1)).request(api, version, request_body)
    assert callable(check)
    assert check(response), response


async def test_acks_zero_produce_gets_no_response_and_an_error_closes(
    cluster: EmulatedCluster, raw: RawFactory
) -> None:
    cluster.inject_fault(1, "Produce", "NOT_LEADER_OR_FOLLOWER")
    connection = await raw(1)
    body = {"Acks": 0, "TimeoutMs": 10, "TopicData": [{"Name": "nope", "PartitionData": [{"Index": 0}]}]}
    await connection.send_request("Produce", 8, body)
    assert await connection.closed_by_broker()


async def test_drop_connections(cluster: EmulatedCluster, raw: RawFactory) -> None:
    on_1, on_2 = await raw(1), await raw(2)
    assert (await on_1.request("ApiVersions", 0))["ErrorCode"] == 0
    assert (await on_2.request("ApiVersions", 0))["ErrorCode"] == 0
    await cluster.drop_connections(1)
    assert await on_1.closed_by_broker()
    assert (await on_2.request("ApiVersions", 0))["ErrorCode"] == 0
    await cluster.drop_connections()
    assert await on_2.closed_by_broker()
    assert (await (await raw(1)).request("ApiVersions", 0))["ErrorCode"] == 0


async def test_stopped_broker_closes_and_restarts_on_the_same_port(cluster: EmulatedCluster) -> None:
    host, port = cluster.brokers[2]
    connection = await RawConnection.open(host, port)
    await cluster.stop_broker(2)
    assert await connection.closed_by_broker()
    with pytest.raises(ConnectionRefusedError):
        await RawConnection.open(host, port)
    assert 2 not in cluster.model.alive_brokers()
    await cluster.start_broker(2)
    assert cluster.brokers[2] == (host, port)
    again = await RawConnection.open(host, port)
    try:
        assert (await again.request("ApiVersions", 0))["ErrorCode"] == 0
    finally:
        await again.close()
    client = AIOKafkaClient(bootstrap_servers=cluster.bootstrap)
    await client.bootstrap()
    try:
        assert {b.nodeId for b in client.cluster.brokers()} == {1, 2, 3}
    finally:
        await client.close()


@pytest.fixture
async def failing_broker() -> AsyncIterator[BrokerServer]:
    async def broken(ctx: RequestContext, request: Message) -> Message:
        raise RuntimeError("handler bug")

    registry = HandlerRegistry()
    registry.register(21, broken)
    server = BrokerServer(1, Dispatcher(registry, FaultInjector()))
    await server.start()
    yield server
    await server.stop()


async def test_failing_handler_is_answered_with_unknown_server_error(
    failing_broker: BrokerServer, caplog: pytest.LogCaptureFixture
) -> None:
    connection = await RawConnection.open(failing_broker.host, failing_broker.port)
    try:
        response = await connection.request("DeleteRecords", 2, _delete_body("t", [0, 1]))
        codes = {p["ErrorCode"] for p in response["Topics"][0]["Partitions"]}
        assert codes == {ErrorCode.UNKNOWN_SERVER_ERROR}
        assert (await connection.request("ApiVersions", 0))["ErrorCode"] == 0
    finally:
        await connection.close()
    assert "handler bug" in caplog.text


async def test_unencodable_handler_response_is_answered_with_unknown_server_error() -> None:
    async def out_of_range(ctx: RequestContext, request: Message) -> Message:
        partition = {"PartitionIndex": 0, "LowWatermark": 0, "ErrorCode": 70000}  # not an int16
        return {"Topics": [{"Name": "t", "Partitions": [partition]}]}

    registry = HandlerRegistry()
    registry.register(21, out_of_range)
    server = BrokerServer(1, Dispatcher(registry, FaultInjector()))
    await server.start()
    connection = await RawConnection.open(server.host, server.port)
    try:
        response = await connection.request("DeleteRecords", 1, _delete_body("t", [0]))
        assert response["Topics"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.UNKNOWN_SERVER_ERROR
        assert (await connection.request("ApiVersions", 0))["ErrorCode"] == 0
    finally:
        await connection.close()
        await server.stop()
