"""Shared by the tests on the real Kafka cluster (``tests/real_kafka``): the service's cluster entry and
its Kafka ACLs, topics with records, Kafka's own reading of log start offsets, a deletion's outcome."""

from __future__ import annotations

import time

import httpx
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    OffsetSpec,
    ResourcePatternType,
    ResourceType,
)

from helpers.kafka_cluster import USERS, KafkaCluster
from helpers.service_processes import Service

CLUSTER = "real"
SERVICE_USER = "purge"
# What the service does on a cluster: read metadata, offsets and configs, delete records, read its
# consumers' committed offsets and describe groups. Granted on every topic and group, as an operator would.
SERVICE_ACLS = [
    (ResourceType.TOPIC, "*", AclOperation.DESCRIBE),
    (ResourceType.TOPIC, "*", AclOperation.DESCRIBE_CONFIGS),
    (ResourceType.TOPIC, "*", AclOperation.DELETE),
    (ResourceType.GROUP, "*", AclOperation.DESCRIBE),
    (ResourceType.BROKER, "kafka-cluster", AclOperation.DESCRIBE),
    (ResourceType.BROKER, "kafka-cluster", AclOperation.DESCRIBE_CONFIGS),
]


def grant(cluster: KafkaCluster, principal: str, acls: list[tuple[ResourceType, str, AclOperation]]) -> None:
    """ALLOW ACLs for ``principal`` from any host, created with Kafka's Admin API as the super user."""
    bindings = [
        AclBinding(
            kind, name, ResourcePatternType.LITERAL, principal, "*", operation, AclPermissionType.ALLOW
        )
        for kind, name, operation in acls
    ]
    admin = AdminClient(cluster.client_config())  # kept alive until every future is answered
    for future in admin.create_acls(bindings).values():
        future.result(timeout=30)


def cluster_settings(cluster: KafkaCluster, user: str = SERVICE_USER, **extra: object) -> dict[str, object]:
    """The ``PURGE_CLUSTERS`` entry of the real cluster, as a production deployment writes it."""
    return {
        "bootstrap_servers": cluster.bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_username": user,
        "sasl_password": USERS[user],
        **extra,
    }


def topic_with_records(cluster: KafkaCluster, topic: str, partitions: int, records: int) -> None:
    admin = AdminClient(cluster.client_config())
    admin.create_topics([NewTopic(topic, partitions)])[topic].result(timeout=30)
    producer = Producer({**cluster.client_config(), "acks": "all", "linger.ms": 5})
    for partition in range(partitions):
        for index in range(records):
            producer.produce(topic, value=f"record {index}".encode(), partition=partition)
    assert producer.flush(30) == 0


def log_start_offsets(cluster: KafkaCluster, topic: str, partitions: int) -> dict[int, int]:
    """Each partition's log start offset as Kafka's Admin API reads it (ListOffsets, earliest)."""
    admin = AdminClient(cluster.client_config())
    asked = {TopicPartition(topic, p): OffsetSpec.earliest() for p in range(partitions)}
    answers = admin.list_offsets(asked)
    return {tp.partition: future.result(timeout=30).offset for tp, future in answers.items()}


def finished(service: Service, token: str, deletion_id: str, timeout: float = 60.0) -> dict[str, object]:
    """The deletion once it has left ``pending`` and ``in_progress`` (or stopped at ``awaiting_approval``)."""
    deadline = time.monotonic() + timeout
    while True:
        deletion = httpx.get(
            f"{service.base}/v1/deletions/{deletion_id}", headers={"Authorization": f"Bearer {token}"}
        ).json()
        if deletion["status"] not in {"pending", "approved", "in_progress"}:
            return dict(deletion)
        assert time.monotonic() < deadline, deletion
        time.sleep(0.2)
