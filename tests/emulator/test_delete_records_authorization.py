"""Broker-side authorization of DeleteRecords and Metadata with SASL/PLAIN users and KIP-11 ACLs,
mirroring AuthorizerIntegrationTest's DeleteRecords cases (kafka-semantics.md §1.12, §5.2)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaClient
from aiokafka.protocol.metadata import MetadataRequest_v1
from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient
from helpers.emulator.aiokafka_requests import Pinned, delete_records, fetch, list_offsets
from helpers.emulator.dataplane_clients import until
from helpers.emulator.record_batches import batch
from helpers.kafka_timing import SHORT_FETCH_WAIT_MS

from kafka_emulator import EmulatedCluster
from kafka_emulator.acls import AclBinding, Operation, PatternType, Permission, ResourceType
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state.dataplane import append

USERS = {"admin": "admin-secret", "alice": "alice-secret"}


@pytest.fixture
async def secured() -> AsyncIterator[EmulatedCluster]:
    async with EmulatedCluster(
        brokers=3,
        sasl_users=USERS,
        super_users=["User:admin"],
        acl_authorizer=True,
        delete_records_max_version=3,
        replica_fetch_wait_max_ms=SHORT_FETCH_WAIT_MS,
    ) as started:
        yield started


async def sasl_client(cluster: EmulatedCluster, user: str) -> AIOKafkaClient:
    client = AIOKafkaClient(
        bootstrap_servers=cluster.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_plain_username=user,
        sasl_plain_password=USERS[user],
    )
    await client.bootstrap()
    return client


def allow(
    cluster: EmulatedCluster, name: str, operation: Operation, pattern: PatternType = PatternType.LITERAL
) -> None:
    cluster.acls.add(
        AclBinding(ResourceType.TOPIC, name, pattern, "User:alice", "*", operation, Permission.ALLOW)
    )


async def seed(cluster: EmulatedCluster) -> None:
    """Topic t with 10 records, appended on the leader through the model (test users cannot produce)."""
    cluster.create_topic("t", 1, 3)
    leader = cluster.model.leader_of("t", 0)
    error, _, _ = append(cluster.model, leader, cluster.model.topics["t"], 0, batch(10))
    assert error == ErrorCode.NONE
    states = cluster.state
    await until(
        lambda: (
            states()["topics"]["t"]["partitions"][0]["replica_states"][str(leader)]["high_watermark"] == 10
        )
    )


async def test_delete_without_delete_acl_is_refused_even_for_missing_topics(secured: EmulatedCluster) -> None:
    await seed(secured)
    allow(secured, "t", Operation.DESCRIBE)
    client = await sasl_client(secured, "alice")
    try:
        leader = secured.model.leader_of("t", 0)
        result = await delete_records(client, leader, [("t", 0, 2), ("never-created", 0, 0)], 2)
    finally:
        await client.close()
    assert result == {
        ("t", 0): (ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1),
        ("never-created", 0): (ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1),
    }
    assert (
        secured.state()["topics"]["t"]["partitions"][0]["replica_states"][str(leader)]["log_start_offset"]
        == 0
    )


async def test_wildcard_delete_acl_allows(secured: EmulatedCluster) -> None:
    await seed(secured)
    allow(secured, "*", Operation.DELETE)
    client = await sasl_client(secured, "alice")
    try:
        result = await delete_records(client, secured.model.leader_of("t", 0), [("t", 0, 2)], 3)
    finally:
        await client.close()
    assert result == {("t", 0): (0, 2, 2)}


async def test_metadata_hides_undescribable_topics_and_refuses_explicit_ones(
    secured: EmulatedCluster,
) -> None:
    secured.create_topic("visible", 1, 3)
    secured.create_topic("hidden", 1, 3)
    allow(secured, "visible", Operation.DELETE)  # DELETE implies DESCRIBE
    client = await sasl_client(secured, "alice")
    try:
        everything = await client.send(client.get_random_node(), Pinned(MetadataRequest_v1(None)))
        explicit = await client.send(
            client.get_random_node(), Pinned(MetadataRequest_v1(["hidden", "visible"]))
        )
    finally:
        await client.close()
    assert {t[1] for t in everything.topics} == {"visible"}
    assert {t[1]: t[0] for t in explicit.topics} == {
        "hidden": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        "visible": 0,
    }


async def test_librdkafka_admin_sees_topic_authorization_failed(secured: EmulatedCluster) -> None:
    await seed(secured)
    allow(secured, "t", Operation.DESCRIBE)

    def attempt() -> str:
        admin = AdminClient(
            {
                "bootstrap.servers": secured.bootstrap,
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.username": "alice",
                "sasl.password": USERS["alice"],
            }
        )
        future = next(iter(admin.delete_records([TopicPartition("t", 0, 2)], request_timeout=10).values()))
        try:
            future.result()
        except KafkaException as exc:
            return str(exc.args[0].name())
        return "NONE"

    assert await asyncio.to_thread(attempt) == "TOPIC_AUTHORIZATION_FAILED"


async def test_fetch_and_list_offsets_need_read_and_describe(secured: EmulatedCluster) -> None:
    await seed(secured)
    allow(secured, "t", Operation.DESCRIBE)
    client = await sasl_client(secured, "alice")
    leader = secured.model.leader_of("t", 0)
    try:
        denied = await fetch(client, leader, "t", 0, 0)
        listed = await list_offsets(client, leader, [("t", 0, -2)])
        allow(secured, "t", Operation.READ)
        granted = await fetch(client, leader, "t", 0, 0)
    finally:
        await client.close()
    assert denied["error"] == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert listed[("t", 0)] == (0, -1, 0)
    assert (granted["error"], granted["high_watermark"]) == (0, 10)
