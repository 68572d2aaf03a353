"""ApiVersions and broker-like handling of what a broker does not support, over real sockets."""

from __future__ import annotations

import asyncio

import confluent_kafka.admin
import pytest
from aiokafka import AIOKafkaClient
from helpers.emulator.factories import RawFactory

from kafka_emulator import EmulatedCluster
from kafka_emulator.protocol import messages
from kafka_emulator.protocol.errors import ErrorCode


def _versions(response: dict[str, object]) -> dict[int, tuple[int, int]]:
    keys = response["ApiKeys"]
    assert isinstance(keys, list)
    return {k["ApiKey"]: (k["MinVersion"], k["MaxVersion"]) for k in keys}


async def test_api_versions_at_every_version_lists_the_implemented_apis(raw: RawFactory) -> None:
    connection = await raw(1)
    for version in range(5):
        body = {"ClientSoftwareName": "raw-test", "ClientSoftwareVersion": "1.0"} if version >= 3 else {}
        response = await connection.request("ApiVersions", version, body)
        assert response["ErrorCode"] == ErrorCode.NONE
        versions = _versions(response)
        assert versions[18] == (0, 4)
        assert versions[21] == (0, 3)
        for api in ("Produce", "Fetch", "ListOffsets", "Metadata", "FindCoordinator", "SaslHandshake"):
            assert messages.api_key(api) in versions


async def test_delete_records_max_version_is_per_broker(cluster: EmulatedCluster, raw: RawFactory) -> None:
    cluster.set_delete_records_max_version(2, 2)
    on_1 = _versions(await (await raw(1)).request("ApiVersions", 2))
    on_2 = _versions(await (await raw(2)).request("ApiVersions", 2))
    assert on_1[21] == (0, 3)
    assert on_2[21] == (0, 2)


async def test_delete_records_above_the_advertised_version_closes_the_connection(
    cluster: EmulatedCluster, raw: RawFactory
) -> None:
    cluster.set_delete_records_max_version(1, 2)
    connection = await raw(1)
    await connection.send_request("DeleteRecords", 3, {"Topics": [], "TimeoutMs": 100})
    assert await connection.closed_by_broker()


async def test_unsupported_api_versions_version_gets_v0_answer_with_its_range(raw: RawFactory) -> None:
    connection = await raw(1)
    correlation = await connection.send_request("ApiVersions", 4, {})
    # Rewrite the version field to 9: the broker must answer with a v0 body (KIP-511).
    frame = messages.encode_request(messages.RequestHeader(18, 3, correlation + 1, "c"), {})
    await connection.read_response("ApiVersions", 4)
    await connection.send_frame(frame[:2] + b"\x00\x09" + frame[4:])
    got, body = await connection.read_response("ApiVersions", 0)
    assert got == correlation + 1
    assert body["ErrorCode"] == ErrorCode.UNSUPPORTED_VERSION
    assert body["ApiKeys"] == [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": 4}]
    assert (await connection.request("ApiVersions", 0))["ErrorCode"] == 0  # the connection stays open


async def test_invalid_client_software_name_is_invalid_request(raw: RawFactory) -> None:
    connection = await raw(1)
    body = {"ClientSoftwareName": "bad name!", "ClientSoftwareVersion": "1"}
    response = await connection.request("ApiVersions", 3, body)
    assert response["ErrorCode"] == ErrorCode.INVALID_REQUEST


async def test_unknown_api_key_closes_the_connection(raw: RawFactory) -> None:
    connection = await raw(1)
    await connection.send_frame(b"\x03\xe7\x00\x00\x00\x00\x00\x01\x00\x00")  # API key 999
    assert await connection.closed_by_broker()


async def test_known_but_unimplemented_api_closes_the_connection(raw: RawFactory) -> None:
    connection = await raw(1)
    advertised = _versions(await connection.request("ApiVersions", 0))
    missing = sorted(set(messages.apis()) - set(advertised))
    assert missing, "every vendored API has a handler; nothing left to check"
    await connection.send_request(missing[0], 0, {})
    assert await connection.closed_by_broker()


async def test_unsupported_metadata_version_closes_the_connection(raw: RawFactory) -> None:
    connection = await raw(1)
    frame = messages.encode_request(messages.RequestHeader(3, 1, 1, "c"), {"Topics": None})
    await connection.send_frame(frame[:2] + b"\x00\x63" + frame[4:])  # version 99
    assert await connection.closed_by_broker()


async def test_pipelined_requests_are_answered_in_order(raw: RawFactory) -> None:
    connection = await raw(2)
    sent = [await connection.send_request("ApiVersions", v % 3, {}) for v in range(20)]
    received = [(await connection.read_response("ApiVersions", v % 3))[0] for v in range(20)]
    assert received == sent


async def test_aiokafka_bootstraps_and_reads_metadata(cluster: EmulatedCluster) -> None:
    cluster.create_topic("wire-orders", 3)
    client = AIOKafkaClient(bootstrap_servers=cluster.bootstrap)
    await client.bootstrap()
    try:
        await client.force_metadata_update()
        brokers = {(b.nodeId, b.host, b.port) for b in client.cluster.brokers()}
        assert brokers == {(b, h, p) for b, (h, p) in cluster.brokers.items()}
        assert client.cluster.partitions_for_topic("wire-orders") == {0, 1, 2}
    finally:
        await client.close()


async def test_confluent_kafka_reads_metadata(cluster: EmulatedCluster) -> None:
    cluster.create_topic("wire-audit", 2)
    admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": cluster.bootstrap})
    metadata = await asyncio.to_thread(admin.list_topics, timeout=10)
    assert set(metadata.brokers) == {1, 2, 3}
    assert sorted(metadata.topics["wire-audit"].partitions) == [0, 1]


@pytest.mark.filterwarnings("ignore::DeprecationWarning:importlib.resources._legacy")  # kafka-python's import
async def test_kafka_python_reads_metadata(cluster: EmulatedCluster) -> None:
    from kafka import KafkaConsumer

    cluster.create_topic("wire-kafka-python", 2)

    def topics() -> set[str]:
        consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap, request_timeout_ms=10000)
        try:
            return set(consumer.topics())
        finally:
            consumer.close()

    assert "wire-kafka-python" in await asyncio.to_thread(topics)
