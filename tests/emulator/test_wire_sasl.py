"""SASL_PLAINTEXT with PLAIN, with aiokafka and librdkafka, plus the raw handshake paths."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import confluent_kafka
import confluent_kafka.admin
import pytest
from aiokafka import AIOKafkaClient
from aiokafka.errors import KafkaError
from helpers.emulator.factories import ClusterFactory
from helpers.emulator.wire_client import RawConnection

from kafka_emulator import EmulatedCluster
from kafka_emulator.protocol.errors import ErrorCode

USERS = {"alice": "alice-secret", "bob": "bob-secret"}


@pytest.fixture
async def sasl_cluster() -> AsyncIterator[EmulatedCluster]:
    async with EmulatedCluster(brokers=2, sasl_users=USERS) as started:
        started.create_topic("sasl-topic", 2)
        yield started


async def _connect(cluster: EmulatedCluster) -> RawConnection:
    host, port = cluster.brokers[1]
    return await RawConnection.open(host, port)


def _aiokafka(cluster: EmulatedCluster, password: str) -> AIOKafkaClient:
    return AIOKafkaClient(
        bootstrap_servers=cluster.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_plain_username="alice",
        sasl_plain_password=password,
        request_timeout_ms=5000,
    )


async def test_aiokafka_authenticates_with_the_right_password(sasl_cluster: EmulatedCluster) -> None:
    client = _aiokafka(sasl_cluster, "alice-secret")
    await client.bootstrap()
    try:
        await client.force_metadata_update()
        assert client.cluster.partitions_for_topic("sasl-topic") == {0, 1}
    finally:
        await client.close()


async def test_aiokafka_is_refused_with_a_wrong_password(sasl_cluster: EmulatedCluster) -> None:
    client = _aiokafka(sasl_cluster, "wrong")
    with pytest.raises(KafkaError):
        await client.bootstrap()
    await client.close()


def _confluent_admin(
    cluster: EmulatedCluster, password: str, errors: list[confluent_kafka.KafkaError] | None = None
) -> confluent_kafka.admin.AdminClient:
    config: dict[str, Any] = {
        "bootstrap.servers": cluster.bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "bob",
        "sasl.password": password,
        "log_level": 0,
    }
    if errors is not None:
        config["error_cb"] = errors.append
    return confluent_kafka.admin.AdminClient(config)


async def test_confluent_kafka_authenticates_with_the_right_password(sasl_cluster: EmulatedCluster) -> None:
    admin = _confluent_admin(sasl_cluster, "bob-secret")
    metadata = await asyncio.to_thread(admin.list_topics, timeout=10)
    assert sorted(metadata.topics["sasl-topic"].partitions) == [0, 1]


async def test_confluent_kafka_is_refused_with_a_wrong_password(sasl_cluster: EmulatedCluster) -> None:
    errors: list[confluent_kafka.KafkaError] = []
    admin = _confluent_admin(sasl_cluster, "wrong", errors)
    deadline = time.monotonic() + 10
    while not errors and time.monotonic() < deadline:
        await asyncio.to_thread(admin.poll, 0.1)
    assert errors, "librdkafka reported no error"
    assert errors[0].code() == confluent_kafka.KafkaError._AUTHENTICATION
    assert "Invalid username or password" in errors[0].str()


async def test_requests_before_authentication_close_the_connection(sasl_cluster: EmulatedCluster) -> None:
    connection = await _connect(sasl_cluster)
    try:
        assert (await connection.request("ApiVersions", 1))["ErrorCode"] == 0  # allowed before SASL
        await connection.send_request("Metadata", 1, {"Topics": None})
        assert await connection.closed_by_broker()
    finally:
        await connection.close()


async def test_handshake_v1_then_authenticate(sasl_cluster: EmulatedCluster) -> None:
    connection = await _connect(sasl_cluster)
    try:
        handshake = await connection.request("SaslHandshake", 1, {"Mechanism": "PLAIN"})
        assert handshake == {"ErrorCode": 0, "Mechanisms": ["PLAIN"]}
        auth = await connection.request("SaslAuthenticate", 2, {"AuthBytes": b"\x00alice\x00alice-secret"})
        assert auth["ErrorCode"] == ErrorCode.NONE
        metadata = await connection.request("Metadata", 1, {"Topics": None})
        assert {t["Name"] for t in metadata["Topics"]} >= {"sasl-topic"}
        again = await connection.request("SaslHandshake", 1, {"Mechanism": "PLAIN"})
        assert again["ErrorCode"] == ErrorCode.ILLEGAL_SASL_STATE
    finally:
        await connection.close()


async def test_failed_authenticate_is_answered_then_closed(sasl_cluster: EmulatedCluster) -> None:
    connection = await _connect(sasl_cluster)
    try:
        await connection.request("SaslHandshake", 1, {"Mechanism": "PLAIN"})
        auth = await connection.request("SaslAuthenticate", 1, {"AuthBytes": b"\x00alice\x00nope"})
        assert auth["ErrorCode"] == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert auth["ErrorMessage"] == "Authentication failed: Invalid username or password"
        assert await connection.closed_by_broker()
    finally:
        await connection.close()


async def test_unsupported_mechanism(sasl_cluster: EmulatedCluster) -> None:
    connection = await _connect(sasl_cluster)
    try:
        handshake = await connection.request("SaslHandshake", 1, {"Mechanism": "SCRAM-SHA-256"})
        assert handshake == {"ErrorCode": ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Mechanisms": ["PLAIN"]}
        assert await connection.closed_by_broker()
    finally:
        await connection.close()


async def test_handshake_v0_takes_a_raw_token(sasl_cluster: EmulatedCluster) -> None:
    connection = await _connect(sasl_cluster)
    try:
        await connection.request("SaslHandshake", 0, {"Mechanism": "PLAIN"})
        await connection.send_frame(b"\x00bob\x00bob-secret")
        assert await connection.read_frame() == b""  # PLAIN's empty server token
        metadata = await connection.request("Metadata", 4, {"Topics": None, "AllowAutoTopicCreation": False})
        assert metadata["Brokers"]
    finally:
        await connection.close()


async def test_plaintext_listener_refuses_sasl_handshake(cluster: EmulatedCluster) -> None:
    host, port = cluster.brokers[1]
    connection = await RawConnection.open(host, port)
    try:
        handshake = await connection.request("SaslHandshake", 1, {"Mechanism": "PLAIN"})
        assert handshake["ErrorCode"] == ErrorCode.ILLEGAL_SASL_STATE
        assert (await connection.request("ApiVersions", 0))["ErrorCode"] == 0
    finally:
        await connection.close()


async def test_the_sasl_user_is_the_principal_the_authorizer_sees(make_cluster: ClusterFactory) -> None:
    cluster = await make_cluster(brokers=1, sasl_users=USERS, super_users=["User:alice"], acl_authorizer=True)
    cluster.create_topic("secret-topic", 1)
    seen: dict[str, set[str]] = {}
    for user, password in USERS.items():
        connection = await _connect(cluster)
        try:
            await connection.request("SaslHandshake", 1, {"Mechanism": "PLAIN"})
            token = b"\x00" + user.encode() + b"\x00" + password.encode()
            auth = await connection.request("SaslAuthenticate", 1, {"AuthBytes": token})
            assert auth["ErrorCode"] == 0
            metadata = await connection.request("Metadata", 1, {"Topics": None})
            seen[user] = {t["Name"] for t in metadata["Topics"]}
        finally:
            await connection.close()
    assert "secret-topic" in seen["alice"]  # super user
    assert "secret-topic" not in seen["bob"]  # no ACL: all-topics Metadata omits it
