"""Consumed-data retention on the real cluster: a policy naming two consumer groups, whose offsets real
confluent-kafka consumers committed, trims each partition to the groups' minimum committed offset as
Kafka's Admin API reads it; a group the policy does not name holds nothing back."""

from __future__ import annotations

import time

import httpx
from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Message,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient
from helpers.kafka_cluster import KafkaCluster
from helpers.kafka_faults import eventually
from helpers.real_kafka import CLUSTER, finished, log_start_offsets, topic_with_records
from helpers.service_processes import Service

TOPIC = "consumed-orders"
# How many records each group has read of partitions 0, 1 and 2.
READ = {"consumed-billing": [30, 70, 100], "consumed-shipping": [50, 40, 100], "consumed-other": [5, 5, 5]}
NAMED = ["consumed-billing", "consumed-shipping"]
MOVING = {
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError.REQUEST_TIMED_OUT,
}


def consume_and_commit(cluster: KafkaCluster, group: str, counts: list[int]) -> None:
    """A consumer of ``group`` reads ``counts[p]`` records of each partition and commits after the last."""
    consumer = Consumer(
        {
            **cluster.client_config(),
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        for partition, count in enumerate(counts):
            consumer.assign([TopicPartition(TOPIC, partition, 0)])
            records = []
            while len(records) < count:
                batch = consumer.consume(count - len(records), timeout=10)
                assert all(record.error() is None for record in batch)
                records += batch
            committed(consumer, records[-1])
    finally:
        consumer.close()


def committed(consumer: Consumer, last: Message) -> None:
    """Commit after ``last``; the group's coordinator may be moving (a broker of the shared cluster was
    restarted by another test): a retriable refusal is committed again, as Kafka's consumers do."""
    for _ in range(50):
        try:
            consumer.commit(message=last, asynchronous=False)
        except KafkaException as exc:
            if exc.args[0].code() not in MOVING:
                raise
            time.sleep(0.2)
        else:
            return
    raise AssertionError("the group's coordinator kept refusing the commit")


def committed_offsets(cluster: KafkaCluster, group: str) -> dict[int, int]:
    """The group's committed offsets on the topic, as Kafka's Admin API reads them (OffsetFetch)."""
    admin = AdminClient(cluster.client_config())
    asked = [ConsumerGroupTopicPartitions(group, [TopicPartition(TOPIC, p) for p in range(3)])]
    answer = admin.list_consumer_group_offsets(asked)[group].result(timeout=30)
    return {tp.partition: tp.offset for tp in answer.topic_partitions}


def test_a_policy_trims_the_topic_to_its_groups_minimum_committed_offsets(
    kafka_cluster: KafkaCluster, purge_service: Service
) -> None:
    topic_with_records(kafka_cluster, TOPIC, 3, 100)
    for group, counts in READ.items():
        consume_and_commit(kafka_cluster, group, counts)
    committed = {group: committed_offsets(kafka_cluster, group) for group in READ}
    assert committed == {group: dict(enumerate(counts)) for group, counts in READ.items()}
    minimum = {p: min(committed[group][p] for group in NAMED) for p in range(3)}

    token = purge_service.token()
    headers = {"Authorization": f"Bearer {token}"}
    policies = f"{purge_service.base}/v1/clusters/{CLUSTER}/policies"
    policy = {
        "name": "consumed-orders",
        "topics": {"names": [TOPIC]},
        "consumers": {"groups": NAMED},
        "min_records": 1,
        "interval_seconds": 3600,
    }
    created = httpx.post(policies, json=policy, headers=headers)
    assert created.status_code == 201, created.text

    def first_run() -> dict[str, object] | None:
        runs = httpx.get(f"{policies}/consumed-orders/runs", headers=headers).json()["items"]
        return runs[0] if runs and runs[0]["finished_at"] else None

    run = eventually(first_run, what="the policy's first sweep")
    assert run["status"] == "submitted", run
    assert run["partitions_planned"] == 3
    deletion = finished(purge_service, token, str(run["deletion_id"]))
    assert deletion["status"] == "succeeded", deletion
    rows = httpx.get(f"{purge_service.base}/v1/deletions/{run['deletion_id']}/partitions", headers=headers)
    assert {row["partition"]: row["resolved_offset"] for row in rows.json()["items"]} == minimum
    assert log_start_offsets(kafka_cluster, TOPIC, 3) == minimum == {0: 30, 1: 40, 2: 100}
