"""Previews and refusals on the real cluster: the groups' lags a preview reports are Kafka's own
``kafka-consumer-groups --describe`` figures; compacted topics are refused as Kafka would refuse them;
``leader_only`` fails with UNSUPPORTED_VERSION on brokers serving DeleteRecords up to v2 and is never sent
without it."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient
from helpers.kafka_cluster import KafkaCluster
from helpers.real_kafka import log_start_offsets, topic_with_records
from helpers.real_kafka_specs import (
    COORDINATOR_MOVING,
    Api,
    by_partition,
    commit,
    create_topic,
    described_lags,
    produce,
)
from helpers.service_processes import Service


def consumer_commit(cluster: KafkaCluster, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Offsets committed by a real consumer of ``group`` (assigned, not subscribed: no rebalance); asked
    again while the group's coordinator is still loading or moving, as ``commit`` does."""
    consumer = Consumer({**cluster.client_config(), "group.id": group, "enable.auto.commit": False})
    deadline = time.monotonic() + 30
    try:
        while True:
            try:
                consumer.commit(
                    offsets=[TopicPartition(topic, p, offset) for p, offset in offsets.items()],
                    asynchronous=False,
                )
                return
            except KafkaException as exc:
                if exc.args[0].code() not in COORDINATOR_MOVING or time.monotonic() > deadline:
                    raise
            time.sleep(0.2)
    finally:
        consumer.close()


def test_preview_lags_equal_kafka_consumer_groups_describe(
    kafka_cluster: KafkaCluster, purge_service: Service
) -> None:
    topic_with_records(kafka_cluster, "previews-lag", 3, 40)
    consumer_commit(kafka_cluster, "previews-a", "previews-lag", {0: 10, 1: 40, 2: 25})
    commit(kafka_cluster, "previews-b", "previews-lag", {0: 35, 1: 5})
    lags = described_lags(kafka_cluster, "previews-a", "previews-b")
    assert lags == {
        ("previews-a", "previews-lag", 0): 30,
        ("previews-a", "previews-lag", 1): 0,
        ("previews-a", "previews-lag", 2): 15,
        ("previews-b", "previews-lag", 0): 5,
        ("previews-b", "previews-lag", 1): 35,
    }
    api = Api(purge_service)
    preview = api.preview([{"topic": "previews-lag", "to": "end"}])
    unread = {
        (group["group"], "previews-lag", partition["partition"]): group["unread_records"]
        for partition in preview["partitions"]
        for group in partition["unconsumed_groups"]
    }
    assert unread == {key: lag for key, lag in lags.items() if lag}
    summary = {g["group"]: (g["unread_records"], g["partitions"]) for g in preview["unconsumed_groups"]}
    assert summary == {"previews-a": (45, 2), "previews-b": (40, 2)}
    assert preview["would_be_refused"] is True
    viewed = {
        (group["group"], "previews-lag", partition["partition"]): group["lag"]
        for partition in api.topic("previews-lag")["partitions"]
        for group in partition["groups"]
        if group["group"].startswith("previews-")
    }
    assert viewed == lags


def test_compacted_topics_are_refused(kafka_cluster: KafkaCluster, purge_service: Service) -> None:
    """``compact`` alone: predicted and refused with Kafka's own POLICY_VIOLATION, nothing moves;
    ``compact,delete``: Kafka deletes, and so does the service."""
    create_topic(kafka_cluster, "previews-compacted", 1, **{"cleanup.policy": "compact"})
    create_topic(kafka_cluster, "previews-compact-delete", 1, **{"cleanup.policy": "compact,delete"})
    produce(kafka_cluster, "previews-compacted", [(0, None)] * 10)
    produce(kafka_cluster, "previews-compact-delete", [(0, None)] * 10)
    admin = AdminClient(kafka_cluster.client_config())
    [kafkas] = admin.delete_records([TopicPartition("previews-compacted", 0, 5)]).values()
    with pytest.raises(KafkaException) as refused_by_kafka:
        kafkas.result(timeout=30)
    assert refused_by_kafka.value.args[0].name() == "POLICY_VIOLATION"
    api = Api(purge_service)
    entry = {"topic": "previews-compacted", "partition": 0, "offset": 5}
    preview = api.preview([entry])
    assert preview["would_be_refused"] is True
    assert preview["refusals"] == ["Compact-only or internal topics cannot have records deleted."]
    assert by_partition(preview["partitions"], "predicted_outcome") == {0: "POLICY_VIOLATION"}
    refused = api.post([entry])
    assert refused.status_code == 422, refused.text
    assert refused.headers["content-type"] == "application/problem+json"
    assert "previews-compacted has cleanup.policy=compact" in refused.json()["errors"][0]["detail"]
    assert log_start_offsets(kafka_cluster, "previews-compacted", 1) == {0: 0}
    deletion = api.delete([{"topic": "previews-compact-delete", "partition": 0, "offset": 5}])
    assert deletion["status"] == "succeeded", deletion
    assert log_start_offsets(kafka_cluster, "previews-compact-delete", 1) == {0: 5}


def test_leader_only_fails_with_unsupported_version(
    kafka_cluster: KafkaCluster, purge_service: Service
) -> None:
    """Apache Kafka serves DeleteRecords without LeaderOnly (v3): the preview predicts
    UNSUPPORTED_VERSION, the deletion fails with it, and no plain DeleteRecords is sent instead."""
    topic_with_records(kafka_cluster, "previews-leader-only", 2, 20)
    api = Api(purge_service)
    entries = [{"topic": "previews-leader-only", "offset": 10}]
    preview = api.preview(entries, leader_only=True)
    assert by_partition(preview["partitions"], "predicted_outcome") == {
        0: "UNSUPPORTED_VERSION",
        1: "UNSUPPORTED_VERSION",
    }
    deletion = api.delete(entries, leader_only=True)
    assert deletion["status"] == "failed", deletion
    assert by_partition(deletion["partitions"], "error_code") == {
        0: "UNSUPPORTED_VERSION",
        1: "UNSUPPORTED_VERSION",
    }
    assert by_partition(deletion["partitions"], "status") == {0: "failed", 1: "failed"}
    assert log_start_offsets(kafka_cluster, "previews-leader-only", 2) == {0: 0, 1: 0}
