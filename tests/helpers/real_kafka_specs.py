"""Shared by the real-Kafka tests of offset specs, previews, transactions and Kafka's own tools: records
produced with what Kafka answered for each (offset, timestamp), consumer groups' commits, Kafka's own
readings (ListOffsets latest in either isolation level, ``kafka-consumer-groups --describe``), and the
service's HTTP API as a caller uses it."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from confluent_kafka import (
    ConsumerGroupTopicPartitions,
    IsolationLevel,
    KafkaError,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from helpers.kafka_cluster import KafkaCluster
from helpers.real_kafka import CLUSTER, finished
from helpers.service_processes import Service

CONSUMER_GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
DELETE_RECORDS_COMMAND = "org.apache.kafka.tools.DeleteRecordsCommand"
# A group coordinator still loading or just moved: the __consumer_offsets topic is created by the
# session's first group request and its leaders settle afterwards.
COORDINATOR_MOVING = {
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
}


@dataclass(frozen=True)
class Produced:
    partition: int
    offset: int
    timestamp: int  # as Kafka answered it: the producer's (CreateTime) or the broker's (LogAppendTime)


def create_topic(cluster: KafkaCluster, topic: str, partitions: int, **config: str) -> None:
    admin = AdminClient(cluster.client_config())
    admin.create_topics([NewTopic(topic, partitions, config=config)])[topic].result(timeout=30)


def produce(
    cluster: KafkaCluster,
    topic: str,
    records: Iterable[tuple[int, int | None]],
    **producer: str | int,
) -> list[Produced]:
    """``records`` as (partition, timestamp or None) produced in one go and flushed once, so batches
    hold many records; what Kafka answered for each, in offset order."""
    answers: list[Produced] = []

    def delivered(error: KafkaError | None, message: Message) -> None:
        assert error is None, error
        partition, offset = message.partition(), message.offset()
        assert partition is not None
        assert offset is not None
        answers.append(Produced(partition, offset, message.timestamp()[1]))

    client = Producer({**cluster.client_config(), "acks": "all", "linger.ms": 50, **producer})
    for index, (partition, timestamp) in enumerate(records):
        key = value = f"record {index}".encode()  # keyed: compacted topics refuse records without keys
        extra = {} if timestamp is None else {"timestamp": timestamp}
        client.produce(topic, value, key, partition, on_delivery=delivered, **extra)
        client.poll(0)
    assert client.flush(30) == 0
    return sorted(answers, key=lambda a: (a.partition, a.offset))


def latest_offsets(
    cluster: KafkaCluster,
    topic: str,
    partitions: int,
    isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
) -> dict[int, int]:
    """Kafka's ListOffsets latest: the high watermark (read uncommitted) or the last stable offset."""
    admin = AdminClient(cluster.client_config())
    asked = {TopicPartition(topic, p): OffsetSpec.latest() for p in range(partitions)}
    answers = admin.list_offsets(asked, isolation_level=isolation)
    return {tp.partition: future.result(timeout=30).offset for tp, future in answers.items()}


def offsets_for_time(cluster: KafkaCluster, topic: str, partitions: int, time_ms: int) -> dict[int, int]:
    """Kafka's ListOffsets by timestamp (-1: no record at or after the time)."""
    admin = AdminClient(cluster.client_config())
    asked = {TopicPartition(topic, p): OffsetSpec.for_timestamp(time_ms) for p in range(partitions)}
    answers = admin.list_offsets(asked)
    return {tp.partition: future.result(timeout=30).offset for tp, future in answers.items()}


def commit(cluster: KafkaCluster, group: str, topic: str, offsets: Mapping[int, int]) -> None:
    """The group's committed offsets, written with Kafka's Admin API (OffsetCommit of an empty group).
    Its answer carries an error per partition rather than failing: while the coordinator is still
    loading or moving (``COORDINATOR_MOVING``) it is asked again."""
    admin = AdminClient(cluster.client_config())
    partitions = [TopicPartition(topic, p, offset) for p, offset in offsets.items()]
    deadline = time.monotonic() + 30
    while True:
        [future] = admin.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group, partitions)]
        ).values()
        errors = [tp.error for tp in future.result(timeout=30).topic_partitions if tp.error]
        if not errors:
            return
        assert all(e.code() in COORDINATOR_MOVING for e in errors), errors
        assert time.monotonic() < deadline, errors
        time.sleep(0.2)


def described_lags(cluster: KafkaCluster, *groups: str) -> dict[tuple[str, str, int], int]:
    """(group, topic, partition): LAG as ``kafka-consumer-groups --describe`` prints it."""
    selection = [argument for group in groups for argument in ("--group", group)]
    run = cluster.java(
        CONSUMER_GROUP_COMMAND,
        "--bootstrap-server",
        cluster.bootstrap,
        "--command-config",
        str(cluster.admin_properties),
        "--describe",
        *selection,
    )
    assert run.returncode == 0, run.stderr
    lags = {}
    header: list[str] = []
    for line in run.stdout.splitlines():
        columns = line.split()
        if columns[:1] == ["GROUP"]:
            header = columns
        elif header and len(columns) >= len(header) - 3 and columns[0] in groups:
            row = dict(zip(header, columns, strict=False))
            lags[row["GROUP"], row["TOPIC"], int(row["PARTITION"])] = int(row["LAG"])
    return lags


class Api:
    """The service's HTTP API as the super user ``alice`` calls it on the cluster ``real``."""

    def __init__(self, service: Service) -> None:
        self.base = service.base
        self.service = service
        self.token = service.token()
        self.headers = {"Authorization": f"Bearer {self.token}"}

    def post(self, partitions: list[dict[str, Any]], **extra: Any) -> httpx.Response:
        body = {"cluster": CLUSTER, "partitions": partitions, "reason": "real Kafka test", **extra}
        return httpx.post(f"{self.base}/v1/deletions", json=body, headers=self.headers, timeout=60)

    def preview(self, partitions: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        response = self.post(partitions, dry_run=True, **extra)
        assert response.status_code == 200, response.text
        return dict(response.json())

    def delete(self, partitions: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        """The deletion once finished, with its ``partitions`` listed."""
        response = self.post(partitions, **extra)
        assert response.status_code == 202, response.text
        deletion = finished(self.service, self.token, response.json()["id"])
        listed = httpx.get(
            f"{self.base}/v1/deletions/{deletion['id']}/partitions", headers=self.headers, timeout=30
        )
        return {**deletion, "partitions": listed.json()["items"]}

    def topic(self, topic: str) -> dict[str, Any]:
        response = httpx.get(f"{self.base}/v1/clusters/{CLUSTER}/topics/{topic}", headers=self.headers)
        assert response.status_code == 200, response.text
        return dict(response.json())


def by_partition(items: Iterable[Mapping[str, Any]], field: str) -> dict[int, Any]:
    return {item["partition"]: item[field] for item in items}
