"""The partition kafka-purge computes for a key is the one each client's producer picks: Kafka's Java
producer (its own ``kafka-console-producer``) and librdkafka (confluent-kafka) producing to the real
cluster, and sarama's hash partitioner (the Go client, run as a program)."""

from __future__ import annotations

import random
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers.kafka_cluster import KafkaCluster
from helpers.sarama import sarama_partitions

from app.adapters.kafka.key_hashes import partition_for_key
from app.domain.partitioners import Partitioner

PARTITIONS = 13
TEXT_KEYS = [f"customer-{n}" for n in range(150)] + ["Zoë", "顧客-4711", "📦 order 9", "a", "x" * 300]
_bytes = random.Random(4711)
BINARY_KEYS = [_bytes.randbytes(_bytes.randint(1, 40)) for _ in range(150)]
KEYS = [key.encode() for key in TEXT_KEYS] + BINARY_KEYS


def new_topic(cluster: KafkaCluster) -> str:
    topic = f"keys-{uuid.uuid4().hex[:8]}"
    admin = AdminClient(cluster.client_config())
    admin.create_topics([NewTopic(topic, PARTITIONS)])[topic].result(timeout=30)
    return topic


def partitions_by_key(cluster: KafkaCluster, topic: str, count: int) -> dict[bytes, int]:
    """Each record's key and the partition it was written to, read back from the topic."""
    consumer = Consumer({**cluster.client_config(), "group.id": topic, "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    found: dict[bytes, int] = {}
    try:
        for _ in range(200):
            for message in consumer.consume(num_messages=500, timeout=0.5):
                assert message.error() is None, message.error()
                found[message.key()] = message.partition()
            if len(found) >= count:
                break
    finally:
        consumer.close()
    assert len(found) == count
    return found


def test_the_java_producer_puts_each_key_where_murmur2_says(kafka_cluster: KafkaCluster) -> None:
    topic = new_topic(kafka_cluster)
    lines = "".join(f"{key}\tvalue\n" for key in TEXT_KEYS)
    produced = kafka_cluster.java(
        "org.apache.kafka.tools.ConsoleProducer",
        *("--bootstrap-server", kafka_cluster.bootstrap, "--topic", topic),
        *("--command-config", str(kafka_cluster.admin_properties)),
        *("--reader-property", "parse.key=true", "--reader-property", "key.separator=\t"),
        stdin=lines,
    )
    assert produced.returncode == 0, produced.stderr
    found = partitions_by_key(kafka_cluster, topic, len(TEXT_KEYS))
    expected = {
        key.encode(): partition_for_key(Partitioner.MURMUR2, key.encode(), PARTITIONS) for key in TEXT_KEYS
    }
    assert found == expected


@pytest.mark.parametrize(
    ("librdkafka_partitioner", "partitioner"),
    [
        ("consistent_random", Partitioner.CRC32),
        ("consistent", Partitioner.CRC32),
        ("murmur2_random", Partitioner.MURMUR2),
        ("fnv1a_random", Partitioner.FNV1A),
    ],
)
def test_librdkafka_puts_each_key_where_its_partitioner_says(
    kafka_cluster: KafkaCluster, librdkafka_partitioner: str, partitioner: Partitioner
) -> None:
    topic = new_topic(kafka_cluster)
    producer = Producer(
        {**kafka_cluster.client_config(), "partitioner": librdkafka_partitioner, "acks": "all"}
    )
    for key in KEYS:
        producer.produce(topic, key=key, value=b"value")
    assert producer.flush(30) == 0
    found = partitions_by_key(kafka_cluster, topic, len(KEYS))
    assert found == {key: partition_for_key(partitioner, key, PARTITIONS) for key in KEYS}


def test_sarama_hash_partitioner_agrees_with_fnv1a() -> None:
    for partitions in (1, 7, PARTITIONS, 50):
        expected = [partition_for_key(Partitioner.FNV1A, key, partitions) for key in KEYS]
        assert sarama_partitions(KEYS, partitions) == expected
