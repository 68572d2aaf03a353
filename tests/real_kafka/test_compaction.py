"""What ``app.domain.compaction`` says of Kafka's log cleaner, checked against the real one: a key's
records stay while its tombstone's segment is active, however long, and go by the forecast's time once
one more record (a second tombstone) rolls that segment."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers.kafka_cluster import KafkaCluster

from app.domain.compaction import CompactionConfig, Outlook, forecast

CONFIGS = {
    "cleanup.policy": "compact",
    "segment.ms": "2000",
    "max.compaction.lag.ms": "2000",
    "min.cleanable.dirty.ratio": "0.9",  # only the lag starts a clean: a few records are never that dirty
    "delete.retention.ms": "600000",
}
BACKOFF_MS = 1000  # the tests' log.cleaner.backoff.ms
ERASED = b"customer-4711"
# The cleaner's own work, and a loaded machine: the forecast bounds when a clean starts, not its end.
SLACK_S = 10


def records(cluster: KafkaCluster, topic: str) -> list[tuple[bytes, bytes | None]]:
    """Every record of the topic's one partition, read from its log start to its end."""
    consumer = Consumer({**cluster.client_config(), "group.id": topic, "enable.auto.commit": False})
    _, end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    consumer.assign([TopicPartition(topic, 0, 0)])
    found: list[tuple[bytes, bytes | None]] = []
    try:
        while True:
            messages = consumer.consume(num_messages=100, timeout=1.0)
            for message in messages:
                assert message.error() is None, message.error()
                found.append((message.key(), message.value()))
                if message.offset() == end - 1:
                    return found
            assert messages, f"no record read up to offset {end}"
    finally:
        consumer.close()


def erased_values(cluster: KafkaCluster, topic: str) -> list[bytes]:
    return [value for key, value in records(cluster, topic) if key == ERASED and value is not None]


def test_a_tombstone_compacts_only_after_one_more_record_and_by_the_forecast(
    kafka_cluster: KafkaCluster,
) -> None:
    topic = f"compaction-{uuid.uuid4().hex[:8]}"
    admin = AdminClient(kafka_cluster.client_config())
    admin.create_topics([NewTopic(topic, 1, config=CONFIGS)])[topic].result(timeout=30)
    producer = Producer({**kafka_cluster.client_config(), "acks": "all", "linger.ms": 0})
    for n in range(3):
        producer.produce(topic, key=ERASED, value=f"address {n}".encode())
        producer.produce(topic, key=f"customer-{n}".encode(), value=b"kept")
    producer.produce(topic, key=ERASED, value=None)
    assert producer.flush(30) == 0
    tombstoned_at = datetime.now(UTC)
    config = CompactionConfig.of(CONFIGS)
    quiet = forecast(config, tombstoned_at, cleaner_backoff_ms=BACKOFF_MS)
    assert quiet.outlook is Outlook.BOUNDED
    assert quiet.roll_at is not None
    assert quiet.compacted_by is not None

    # Twice the forecast's time with nothing written: the tombstone's segment is still the active one.
    time.sleep(2 * (quiet.compacted_by - tombstoned_at).total_seconds())
    assert erased_values(kafka_cluster, topic) == [b"address 0", b"address 1", b"address 2"]

    producer.produce(topic, key=ERASED, value=None)
    assert producer.flush(30) == 0
    rolled = forecast(config, tombstoned_at, datetime.now(UTC), cleaner_backoff_ms=BACKOFF_MS)
    assert rolled.compacted_by is not None
    deadline = rolled.compacted_by + timedelta(seconds=SLACK_S)
    while erased_values(kafka_cluster, topic):
        assert datetime.now(UTC) < deadline, "the cleaner did not remove the key's records in time"
        time.sleep(0.5)
    kept = [key for key, value in records(kafka_cluster, topic) if value is not None]
    assert kept == [b"customer-0", b"customer-1", b"customer-2"]
