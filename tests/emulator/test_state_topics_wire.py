"""Metadata, CreateTopics, DeleteTopics and DescribeConfigs over the wire, with aiokafka's admin client
and librdkafka's as the referee."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaClient, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.protocol.metadata import MetadataRequest_v1
from confluent_kafka.admin import AdminClient, ConfigEntry, ConfigSource
from confluent_kafka.admin import ConfigResource as ConfluentResource
from confluent_kafka.admin import NewTopic as ConfluentTopic
from helpers.emulator.aiokafka_requests import Pinned
from helpers.emulator.dataplane_clients import until
from helpers.emulator.factories import RawFactory
from helpers.emulator.record_batches import batch

from kafka_emulator import EmulatedCluster
from kafka_emulator.protocol.errors import ErrorCode


@pytest.fixture
async def admin(cluster: EmulatedCluster) -> AsyncIterator[AIOKafkaAdminClient]:
    started = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    await started.start()
    yield started
    await started.close()


def errors(response: object) -> dict[str, int]:
    return {topic[0]: topic[1] for topic in response.topic_errors}  # type: ignore[attr-defined]


async def test_create_topics_errors_and_validate_only(
    cluster: EmulatedCluster, admin: AIOKafkaAdminClient
) -> None:
    created = await admin.create_topics(
        [NewTopic("a", 3, 2, topic_configs={"cleanup.policy": "compact,delete"})]
    )
    assert errors(created) == {"a": 0}
    again = await admin.create_topics(
        [
            NewTopic("a", 1, 1),
            NewTopic("too-many-replicas", 1, 4),
            NewTopic("no-partitions", 0, 1),
            NewTopic("too-many-partitions", 200_000, 1),
            NewTopic("bad-config", 1, 1, topic_configs={"cleanup.policy": "shred"}),
            NewTopic("bad name!", 1, 1),
        ]
    )
    assert errors(again) == {
        "a": ErrorCode.TOPIC_ALREADY_EXISTS,
        "too-many-replicas": ErrorCode.INVALID_REPLICATION_FACTOR,
        "no-partitions": ErrorCode.INVALID_PARTITIONS,
        "too-many-partitions": ErrorCode.INVALID_PARTITIONS,
        "bad-config": ErrorCode.INVALID_CONFIG,
        "bad name!": ErrorCode.INVALID_TOPIC_EXCEPTION,
    }
    checked = await admin.create_topics([NewTopic("dry", 2, 3)], validate_only=True)
    assert errors(checked) == {"dry": 0}
    assert "dry" not in cluster.state()["topics"]
    partitions = cluster.state()["topics"]["a"]["partitions"]
    assert [len(p["replicas"]) for p in partitions] == [2, 2, 2]
    assert len({p["leader"] for p in partitions}) > 1  # leaders spread round-robin


async def test_describe_configs_reports_cleanup_policy(
    cluster: EmulatedCluster, admin: AIOKafkaAdminClient
) -> None:
    cluster.create_topic("c", 1, 3, {"cleanup.policy": "compact"})
    responses = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "c")])
    resource = responses[0].resources[0]
    assert resource[0] == 0
    configs = {entry[0]: entry[1] for entry in resource[4]}
    assert configs["cleanup.policy"] == "compact"
    assert configs["retention.ms"] == "604800000"
    unknown = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "missing")])
    assert unknown[0].resources[0][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def test_delete_topics(cluster: EmulatedCluster, admin: AIOKafkaAdminClient) -> None:
    cluster.create_topic("gone", 2, 3)
    response = await admin.delete_topics(["gone", "never", "__consumer_offsets"])
    codes = {topic[0]: topic[1] for topic in response.topic_error_codes}
    assert codes == {
        "gone": 0,
        "never": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        "__consumer_offsets": ErrorCode.INVALID_TOPIC_EXCEPTION,
    }
    assert "gone" not in cluster.state()["topics"]


async def test_metadata_lists_alive_brokers_and_leader_not_available(cluster: EmulatedCluster) -> None:
    cluster.create_topic("single", 1, 1)
    only = cluster.model.leader_of("single", 0)
    await cluster.stop_broker(only)
    client = AIOKafkaClient(bootstrap_servers=cluster.bootstrap)
    await client.bootstrap()
    try:
        node = next(b for b in (1, 2, 3) if b != only)
        response = await client.send(node, Pinned(MetadataRequest_v1(["single", "nope"])))
    finally:
        await client.close()
    assert sorted(b[0] for b in response.brokers) == sorted(b for b in (1, 2, 3) if b != only)
    topics = {t[1]: t for t in response.topics}
    assert topics["nope"][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    partition = topics["single"][3][0]
    assert (partition[0], partition[2]) == (ErrorCode.LEADER_NOT_AVAILABLE, -1)
    assert cluster.model.leader_of("single", 0) == -1


async def test_librdkafka_creates_and_lists_topics(cluster: EmulatedCluster) -> None:
    def run() -> tuple[int, list[str]]:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        for future in admin.create_topics([ConfluentTopic("ref", 4, 3)], request_timeout=10).values():
            future.result()
        metadata = admin.list_topics(timeout=10)
        return len(metadata.topics["ref"].partitions), sorted(metadata.topics)

    partitions, names = await asyncio.to_thread(run)
    assert partitions == 4
    assert "ref" in names


async def test_produce_acks_zero_and_to_a_follower(cluster: EmulatedCluster, raw: RawFactory) -> None:
    cluster.create_topic("t", 1, 3)
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap, acks=0)
    await producer.start()
    try:
        for i in range(3):
            await producer.send_and_wait("t", b"fire-and-forget-%d" % i, partition=0)
    finally:
        await producer.stop()
    leader = cluster.model.leader_of("t", 0)
    await until(
        lambda: (
            cluster.state()["topics"]["t"]["partitions"][0]["replica_states"][str(leader)]["log_end_offset"]
            == 3
        )
    )
    follower = next(b for b in (1, 2, 3) if b != leader)
    connection = await raw(follower)
    body = {
        "Acks": 1,
        "TimeoutMs": 1000,
        "TopicData": [{"Name": "t", "PartitionData": [{"Index": 0, "Records": batch(1)}]}],
    }
    answer = (await connection.request("Produce", 9, body))["Responses"][0]["PartitionResponses"][0]
    assert (answer["ErrorCode"], answer["BaseOffset"]) == (ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)
    connection = await raw(leader)
    answer = (await connection.request("Produce", 9, body))["Responses"][0]["PartitionResponses"][0]
    assert (answer["ErrorCode"], answer["BaseOffset"], answer["LogStartOffset"]) == (0, 3, 0)


async def test_describe_broker_configs(cluster: EmulatedCluster, admin: AIOKafkaAdminClient) -> None:
    responses = await admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "2")])
    resource = next(r for response in responses for r in response.resources)
    assert resource[0] == 0
    configs = {entry[0]: entry[1] for entry in resource[4]}
    assert configs["broker.id"] == "2"
    assert configs["auto.create.topics.enable"] == "false"


KAFKA_44_TOPIC_CONFIGS = 37  # LogConfig's topic configs in Apache Kafka 4.4


def librdkafka_topic_configs(bootstrap: str, topic: str) -> dict[str, ConfigEntry]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    [future] = admin.describe_configs([ConfluentResource("topic", topic)]).values()
    entries: dict[str, ConfigEntry] = future.result(timeout=10)
    return entries


async def test_describe_configs_lists_the_topics_full_config_set_with_sources_and_synonyms(
    cluster: EmulatedCluster,
) -> None:
    cluster.create_topic("c", 1, 3, {"cleanup.policy": "compact", "retention.ms": "3600000"})
    entries = await asyncio.to_thread(librdkafka_topic_configs, cluster.bootstrap, "c")
    assert len(entries) == KAFKA_44_TOPIC_CONFIGS
    defaults = {name: entry.value for name, entry in entries.items() if entry.is_default}
    assert defaults["remote.storage.enable"] == "false"
    assert defaults["local.retention.ms"] == "-2"
    assert defaults["message.timestamp.after.max.ms"] == "3600000"
    assert defaults["file.delete.delay.ms"] == "60000"

    def described(name: str) -> tuple[str | None, ConfigSource, list[tuple[str, str | None, ConfigSource]]]:
        entry = entries[name]
        synonyms = [(s.name, s.value, ConfigSource(int(s.source))) for s in entry.synonyms.values()]
        return entry.value, ConfigSource(int(entry.source)), synonyms

    topic, default = ConfigSource.DYNAMIC_TOPIC_CONFIG, ConfigSource.DEFAULT_CONFIG
    assert described("cleanup.policy") == (
        "compact",
        topic,
        [("cleanup.policy", "compact", topic), ("log.cleanup.policy", "delete", default)],
    )
    # log.retention.ms has no default (log.retention.hours has): no synonym for the broker side.
    assert described("retention.ms") == ("3600000", topic, [("retention.ms", "3600000", topic)])
    assert described("segment.index.bytes") == (
        "10485760",
        default,
        [("log.index.size.max.bytes", "10485760", default)],
    )
    assert described("segment.ms") == ("604800000", default, [])
