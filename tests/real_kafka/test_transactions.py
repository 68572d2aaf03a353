"""A topic written by a transactional producer: committed transactions (each ending in a control record)
and one left open. ``-1``/``end`` resolve to the high watermark, past the last stable offset: the preview
shows that cut and the open transaction's records it removes, and Kafka deletes exactly that."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import IsolationLevel, Producer
from helpers.kafka_cluster import KafkaCluster
from helpers.real_kafka import log_start_offsets
from helpers.real_kafka_specs import Api, create_topic, latest_offsets
from helpers.service_processes import Service

TOPIC = "transactions-open"
COMMITTED, OPEN = (10, 15), 7  # records of each committed transaction, of the open one


@pytest.fixture
def open_transaction(kafka_cluster: KafkaCluster) -> Iterator[Producer]:
    create_topic(kafka_cluster, TOPIC, 1)
    producer = Producer(
        {**kafka_cluster.client_config(), "transactional.id": "transactions-test", "linger.ms": 20}
    )
    producer.init_transactions(30)
    for count in COMMITTED:
        producer.begin_transaction()
        for index in range(count):
            producer.produce(TOPIC, f"committed {index}".encode(), partition=0)
        producer.commit_transaction(30)
    producer.begin_transaction()
    for index in range(OPEN):
        producer.produce(TOPIC, f"open {index}".encode(), partition=0)
    assert producer.flush(30) == 0
    try:
        yield producer
    finally:
        producer.abort_transaction(30)


def test_end_resolves_to_the_high_watermark_past_an_open_transaction(
    kafka_cluster: KafkaCluster, purge_service: Service, open_transaction: Producer
) -> None:
    [high_watermark] = latest_offsets(kafka_cluster, TOPIC, 1).values()
    [last_stable] = latest_offsets(kafka_cluster, TOPIC, 1, IsolationLevel.READ_COMMITTED).values()
    # Each committed transaction's records and its commit marker; the open one's records after them.
    assert last_stable == sum(COMMITTED) + len(COMMITTED)
    assert high_watermark == last_stable + OPEN
    api = Api(purge_service)
    for entry in ({"topic": TOPIC, "partition": 0, "offset": -1}, {"topic": TOPIC, "to": "end"}):
        [partition] = api.preview([entry])["partitions"]
        assert partition["resolved_offset"] == partition["high_watermark"] == high_watermark
        assert partition["last_stable_offset"] == last_stable
        assert partition["uncommitted_records"] == OPEN
        assert partition["records_deleted"] == high_watermark
    deletion = api.delete([{"topic": TOPIC, "to": "end"}])
    assert deletion["status"] == "succeeded", deletion
    assert [(p["resolved_offset"], p["low_watermark"]) for p in deletion["partitions"]] == [
        (high_watermark, high_watermark)
    ]
    assert log_start_offsets(kafka_cluster, TOPIC, 1) == {0: high_watermark}
