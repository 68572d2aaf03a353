"""Real clients run consumer groups against the emulator: kafka-python, aiokafka and librdkafka."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import TopicPartition as AioTopicPartition

from kafka_emulator import EmulatedCluster

# kafka-python loads its schemas with importlib.resources.read_text, deprecated since Python 3.11
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:importlib.resources._legacy")
FAST_GROUP = {"heartbeat_interval_ms": 100, "session_timeout_ms": 6000}


async def produce(
    cluster: EmulatedCluster, topic: str, per_partition: int, partitions: int, tag: str
) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap)
    await producer.start()
    try:
        for partition in range(partitions):
            for i in range(per_partition):
                await producer.send_and_wait(topic, f"{tag}-{partition}-{i}".encode(), partition=partition)
    finally:
        await producer.stop()


def kafka_python_consume_and_commit(bootstrap: str, topic: str, expected: int) -> dict[str, Any]:
    from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id="kp-group",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=10_000,
        heartbeat_interval_ms=100,
    )
    values = []
    for message in consumer:
        values.append(message.value)
        if len(values) == expected:
            break
    consumer.commit()
    committed = {p: consumer.committed(TopicPartition(topic, p)) for p in range(2)}
    consumer.close()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return {
            "values": values,
            "committed": committed,
            "groups": admin.list_groups(),
            "described": admin.describe_groups(["kp-group"]),
            "offsets": admin.list_group_offsets({"kp-group": None})["kp-group"],
        }
    finally:
        admin.close()


async def test_kafka_python_group_commits_and_admin_reads_them(cluster: EmulatedCluster) -> None:
    cluster.create_topic("kp-topic", 2)
    await produce(cluster, "kp-topic", 3, 2, "kp")
    found = await asyncio.to_thread(kafka_python_consume_and_commit, cluster.bootstrap, "kp-topic", 6)
    assert len(found["values"]) == 6
    assert found["committed"] == {0: 3, 1: 3}
    assert [(g["group_id"], g["protocol_type"], g["group_state"]) for g in found["groups"]] == [
        ("kp-group", "consumer", "Empty")
    ]
    assert found["described"]["kp-group"]["group_state"] == "Empty"
    assert {tp.partition: meta.offset for tp, meta in found["offsets"].items()} == {0: 3, 1: 3}
    assert cluster.state()["groups"]["kp-group"]["offsets"] == {"kp-topic": {"0": 3, "1": 3}}


def confluent_consume_and_commit(bootstrap: str, topic: str, expected: int) -> dict[str, Any]:
    from confluent_kafka import Consumer, ConsumerGroupTopicPartitions
    from confluent_kafka.admin import AdminClient

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "ck-group",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    count, deadline = 0, time.monotonic() + 20
    while count < expected and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            count += 1
    described_while_stable = None
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        consumer.commit(asynchronous=False)
        described_while_stable = admin.describe_consumer_groups(["ck-group"])["ck-group"].result(timeout=10)
        consumer.close()
        request = [ConsumerGroupTopicPartitions("ck-group")]
        offsets = admin.list_consumer_group_offsets(request)["ck-group"].result(timeout=10)
        listed = admin.list_consumer_groups().result(timeout=10)
    finally:
        consumer.close()
    return {
        "count": count,
        "offsets": {tp.partition: tp.offset for tp in offsets.topic_partitions},
        "listed": {(g.group_id, str(g.state)) for g in listed.valid},
        "described": described_while_stable,
    }


async def test_confluent_consumer_commits_and_admin_lists_offsets(cluster: EmulatedCluster) -> None:
    cluster.create_topic("ck-topic", 3)
    await produce(cluster, "ck-topic", 2, 3, "ck")
    found = await asyncio.to_thread(confluent_consume_and_commit, cluster.bootstrap, "ck-topic", 6)
    assert found["count"] == 6
    assert found["offsets"] == {0: 2, 1: 2, 2: 2}
    assert ("ck-group", "ConsumerGroupState.EMPTY") in found["listed"]
    described = found["described"]
    assert str(described.state) == "ConsumerGroupState.STABLE"
    assert len(described.members) == 1
    assigned = {tp.partition for tp in described.members[0].assignment.topic_partitions}
    assert assigned == {0, 1, 2}


async def test_aiokafka_admin_reads_groups(cluster: EmulatedCluster) -> None:
    cluster.create_topic("aio-topic", 2)
    await produce(cluster, "aio-topic", 2, 2, "aio")
    consumer = AIOKafkaConsumer(
        "aio-topic",
        bootstrap_servers=cluster.bootstrap,
        group_id="aio-group",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        **FAST_GROUP,
    )
    admin = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    await consumer.start()
    await admin.start()
    try:
        seen = 0
        for _ in range(50):
            batches = await consumer.getmany(timeout_ms=200)
            seen += sum(len(b) for b in batches.values())
            if seen == 4:
                break
        await consumer.commit({AioTopicPartition("aio-topic", 0): 1})
        assert ("aio-group", "consumer") in await admin.list_consumer_groups()
        described = await admin.describe_consumer_groups(["aio-group"])
        group = described[0].to_object()["groups"][0]
        assert (group["state"], group["protocol"], group["protocol_type"]) == (
            "Stable",
            "roundrobin",
            "consumer",
        )
        (member,) = group["members"]
        assert member["client_host"] == "/127.0.0.1"
        assert b"aio-topic" in member["member_metadata"]  # ConsumerProtocolSubscription, shown when Stable
        assert member["member_assignment"].startswith(b"\x00\x00\x00\x00\x00\x01\x00\taio-topic")
        offsets = await admin.list_consumer_group_offsets("aio-group")
        assert {tp.partition: meta.offset for tp, meta in offsets.items()} == {0: 1}
    finally:
        await consumer.stop()
        await admin.close()


async def _wait_for_assignments(consumers: list[AIOKafkaConsumer], wanted: list[int]) -> list[set[int]]:
    """Poll every consumer (which drives their fetchers) until the assignment sizes are as wanted."""
    for _ in range(200):
        sizes = [len(c.assignment()) for c in consumers]
        if sizes == wanted:
            return [{tp.partition for tp in c.assignment()} for c in consumers]
        await asyncio.sleep(0.05)
    raise AssertionError(f"assignments never reached {wanted}: {[c.assignment() for c in consumers]}")


async def _consume(consumer: AIOKafkaConsumer, count: int) -> list[bytes]:
    values: list[bytes] = []
    for _ in range(100):
        batches = await consumer.getmany(timeout_ms=100)
        values += [m.value for batch in batches.values() for m in batch]
        if len(values) >= count:
            break
    await consumer.commit()
    return values


async def test_aiokafka_group_of_two_splits_commits_and_takes_over(cluster: EmulatedCluster) -> None:
    topic = "pair-topic"
    cluster.create_topic(topic, 4)
    await produce(cluster, topic, 5, 4, "old")
    members = [
        AIOKafkaConsumer(
            topic,
            bootstrap_servers=cluster.bootstrap,
            group_id="pair",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            **FAST_GROUP,
        )
        for _ in range(2)
    ]
    first, second = members
    try:
        await asyncio.gather(first.start(), second.start())
        split = await _wait_for_assignments(members, [2, 2])
        assert split[0] | split[1] == {0, 1, 2, 3}
        consumed = await asyncio.gather(_consume(first, 10), _consume(second, 10))
        assert sorted(consumed[0] + consumed[1]) == sorted(
            f"old-{p}-{i}".encode() for p in range(4) for i in range(5)
        )
        offsets = cluster.state()["groups"]["pair"]["offsets"][topic]
        assert offsets == {str(p): 5 for p in range(4)}
        await second.stop()
        await _wait_for_assignments([first], [4])
        await produce(cluster, topic, 1, 4, "new")
        taken_over = await _consume(first, 4)
        assert sorted(taken_over) == [f"new-{p}-0".encode() for p in range(4)]
        assert cluster.state()["groups"]["pair"]["offsets"][topic] == {str(p): 6 for p in range(4)}
    finally:
        for member in members:
            await member.stop()


async def test_group_and_offsets_survive_a_coordinator_stop(cluster: EmulatedCluster) -> None:
    topic = "failover-topic"
    cluster.create_topic(topic, 1)
    await produce(cluster, topic, 3, 1, "f")
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=cluster.bootstrap,
        group_id="failover",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        **FAST_GROUP,
    )
    await consumer.start()
    try:
        assert len(await _consume(consumer, 3)) == 3
        before = cluster.state()["groups"]["failover"]
        await cluster.stop_broker(before["coordinator"])
        after = cluster.state()["groups"]["failover"]
        assert after["coordinator"] not in (-1, before["coordinator"])
        assert after["offsets"] == {topic: {"0": 3}}
        partition = AioTopicPartition(topic, 0)
        await consumer.commit({partition: 2})  # finds the new coordinator, same member and generation
        assert await consumer.committed(partition) == 2
        now = cluster.state()["groups"]["failover"]
        assert (now["state"], now["generation"], now["members"]) == (
            "Stable",
            before["generation"],
            before["members"],
        )
        await cluster.start_broker(before["coordinator"])
    finally:
        await consumer.stop()
