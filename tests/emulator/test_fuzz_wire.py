"""Malformed input never takes a listener down: random and truncated frames, bad length prefixes,
unknown API keys, abrupt disconnects and hypothesis-generated bodies. After each attack a real
client still works."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import struct
from collections.abc import Iterator

import pytest
from aiokafka import AIOKafkaClient
from helpers.emulator.factories import RawFactory
from helpers.emulator.record_batches import batch
from helpers.emulator.wire_client import RawConnection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_emulator import EmulatedCluster
from kafka_emulator.protocol import messages
from kafka_emulator.protocol.primitives import DecodeError

API_KEYS = sorted(messages.apis())


@pytest.fixture(autouse=True)
def no_listener_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Connections may be closed, but nothing may fail inside the emulator."""
    with caplog.at_level(logging.DEBUG, logger="kafka_emulator"):
        yield
    errors = [r for r in caplog.records if r.name.startswith("kafka_emulator") and r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]


async def _still_serves(cluster: EmulatedCluster) -> None:
    for broker, (host, port) in cluster.brokers.items():
        connection = await RawConnection.open(host, port)
        try:
            assert (await connection.request("ApiVersions", 2))["ErrorCode"] == 0, broker
        finally:
            await connection.close()
    client = AIOKafkaClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=5000)
    await client.bootstrap()
    try:
        await client.force_metadata_update()
        assert len(client.cluster.brokers()) == len(cluster.brokers)
    finally:
        await client.close()


async def _answered_or_closed(connection: RawConnection) -> None:
    """The broker either answers the frame or closes the connection; it never hangs or crashes."""
    await asyncio.wait_for(connection.read_frame(), 10)


async def test_random_frames(cluster: EmulatedCluster, raw: RawFactory) -> None:
    rng = random.Random(1234)
    for _ in range(60):
        connection = await raw(rng.choice([1, 2, 3]))
        key = rng.choice([*API_KEYS, 999, -1, 7])
        head = struct.pack(">hhi", key, rng.randint(-1, 20), rng.randint(0, 1000))
        await connection.send_frame(head + rng.randbytes(rng.randint(0, 300)))
        await _answered_or_closed(connection)
    await _still_serves(cluster)


async def test_truncated_valid_requests(cluster: EmulatedCluster, raw: RawFactory) -> None:
    body = {"Topics": [{"Name": "t", "Partitions": [{"PartitionIndex": 0, "Offset": 1}]}], "TimeoutMs": 10}
    frame = messages.encode_request(messages.RequestHeader(21, 2, 1, "fuzz"), body)
    for cut in range(0, len(frame), 3):
        connection = await raw(1)
        await connection.send_frame(frame[:cut])  # a well-framed but truncated request
        assert await connection.closed_by_broker()
    for cut in (1, 10, len(frame) - 1):
        connection = await raw(2)
        connection.writer.write(struct.pack(">i", len(frame)) + frame[:cut])  # frame cut mid-way
        await connection.writer.drain()
        await connection.close()
    await _still_serves(cluster)


async def test_bad_length_prefixes(cluster: EmulatedCluster, raw: RawFactory) -> None:
    for prefix in (0x7FFFFFFF, 100 * 1024 * 1024 + 1, -1, -(2**31)):
        connection = await raw(1)
        connection.writer.write(struct.pack(">i", prefix) + b"\x00" * 16)
        await connection.writer.drain()
        assert await connection.closed_by_broker()
    connection = await raw(1)
    await connection.send_frame(b"")  # zero-length frame
    assert await connection.closed_by_broker()
    await _still_serves(cluster)


async def test_abrupt_disconnects(cluster: EmulatedCluster, raw: RawFactory) -> None:
    cluster.inject_fault(1, "Metadata", delay_ms=200, count=3)
    for _ in range(3):
        connection = await raw(1)
        await connection.send_request("Metadata", 1, {"Topics": None})
        connection.writer.transport.abort()  # gone while the request is being handled
    for _ in range(10):
        connection = await raw(3)
        connection.writer.write(b"\x00\x00")  # half a length prefix
        connection.writer.transport.abort()
    await asyncio.sleep(0.3)
    await _still_serves(cluster)


@settings(max_examples=300, deadline=None)
@given(key=st.sampled_from(API_KEYS), version=st.integers(0, 17), body=st.binary(max_size=200))
def test_decoder_only_raises_decode_error(key: int, version: int, body: bytes) -> None:
    low, high = messages.supported_versions(key)
    version = min(max(version, low), high)
    frame = struct.pack(">hhi", key, version, 1) + body
    with contextlib.suppress(DecodeError):
        messages.decode_request(frame)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frame=st.binary(max_size=120))
async def test_hypothesis_frames_over_the_socket(cluster: EmulatedCluster, frame: bytes) -> None:
    host, port = cluster.brokers[2]
    connection = await RawConnection.open(host, port)
    try:
        await connection.send_frame(frame)
        await _answered_or_closed(connection)
    finally:
        await connection.close()
    healthy = await RawConnection.open(host, port)
    try:
        assert (await healthy.request("ApiVersions", 0))["ErrorCode"] == 0
    finally:
        await healthy.close()


async def test_disconnect_and_drop_while_delete_records_waits_in_purgatory(
    cluster: EmulatedCluster, raw: RawFactory
) -> None:
    cluster.create_topic("fuzz-purgatory", 1, replication_factor=3)
    leader = cluster.model.leader_of("fuzz-purgatory", 0)
    follower = next(b for b in cluster.brokers if b != leader)
    body = {"Topics": [{"Name": "fuzz-purgatory", "Partitions": [{"PartitionIndex": 0, "Offset": -1}]}]}
    data = [{"Name": "fuzz-purgatory", "PartitionData": [{"Index": 0, "Records": batch(1)}]}]
    produced = await (await raw(leader)).request(
        "Produce", 7, {"Acks": -1, "TimeoutMs": 5000, "TopicData": data}
    )
    assert produced["Responses"][0]["PartitionResponses"][0]["ErrorCode"] == 0
    cluster.pause_follower("fuzz-purgatory", 0, follower)  # the next DeleteRecords waits in purgatory
    gone = await raw(leader)
    await gone.send_request("DeleteRecords", 2, {**body, "TimeoutMs": 5000})
    dropped = await raw(leader)
    await dropped.send_request("DeleteRecords", 2, {**body, "TimeoutMs": 5000})
    await asyncio.sleep(0.05)
    gone.writer.transport.abort()
    await cluster.drop_connections(leader)
    assert await dropped.closed_by_broker()
    cluster.resume_follower("fuzz-purgatory", 0, follower)
    await _still_serves(cluster)
