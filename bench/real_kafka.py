"""The real Apache Kafka cluster of ``service_bench.py --kafka real``, and Kafka's own Java Admin client.

The cluster is the tests' (``tests/helpers/kafka_cluster.py``: 3 KRaft nodes on loopback, SASL/SCRAM-
SHA-512, the StandardAuthorizer, replication factor 3, Kafka's defaults otherwise), started in a
temporary folder by the bench itself. The service reaches it as the user ``purge`` with the Kafka ACLs
the tests grant; the direct calls run as the super user ``admin``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.kafka_cluster import KafkaCluster  # noqa: E402
from helpers.real_kafka import SERVICE_ACLS, SERVICE_USER, cluster_settings, grant  # noqa: E402

JAVA_ADMIN = ROOT / "bench" / "DeleteRecordsBench.java"
# Partitions created per CreateTopics or CreatePartitions: Kafka's controller refuses an operation of more
# than 10,000 metadata records ("excessively large batch operation"), one per partition plus the topic's.
STEP = 5_000


@dataclass(frozen=True)
class Target:
    """How each way reaches one cluster: aiokafka and confluent-kafka settings, and the service's
    ``PURGE_CLUSTERS`` entry."""

    bootstrap: str
    aiokafka: dict[str, Any]
    confluent: dict[str, Any]
    service: dict[str, Any]
    cluster: KafkaCluster | None = None


def emulator_target(bootstrap: str) -> Target:
    return Target(
        bootstrap,
        {"bootstrap_servers": bootstrap},
        {"bootstrap.servers": bootstrap},
        {"bootstrap_servers": bootstrap, "request_timeout_ms": 60_000},
    )


@contextmanager
def real_cluster(work: Path, fetch_wait_ms: float) -> Iterator[Target]:
    """A started 3-node cluster with the service's ACLs granted; its folder is removed at the end."""
    overrides = {
        "replica.fetch.wait.max.ms": f"{fetch_wait_ms:g}",
        # Creating 10,000 partitions with 3 replicas each keeps two cores so busy that the controller
        # answers heartbeats late and fences brokers at Kafka's 9 s: a minute rides it out.
        "broker.session.timeout.ms": "60000",
    }
    # Each node leads a third of the 10,000-partition topic and follows the rest: Kafka's own 1 GiB heap
    # (kafka-server-start.sh), not the tests' 512 MiB.
    cluster = KafkaCluster(work / "kafka", overrides, heap="1g")
    try:
        cluster.start()
        print(f"real Kafka: 3 nodes started in {cluster.started_in:.1f} s", file=sys.stderr, flush=True)
        grant(cluster, f"User:{SERVICE_USER}", SERVICE_ACLS)
        yield Target(
            cluster.bootstrap,
            cluster.aiokafka_config(),
            cluster.client_config(),
            cluster_settings(cluster, request_timeout_ms=60_000),
            cluster,
        )
    except BaseException:
        for node in cluster.nodes:
            errors = [
                line for line in node.log.read_text().splitlines() if "ERROR" in line or "FATAL" in line
            ]
            print(f"node {node.node_id}, its last errors:", *errors[-10:], sep="\n  ", file=sys.stderr)
        raise
    finally:
        cluster.close()
        shutil.rmtree(work / "kafka", ignore_errors=True)


def create_topic(
    cluster: KafkaCluster,
    topic: str,
    partitions: int,
    records: int,
    assignment: list[list[int]] | None = None,
) -> float:
    """``topic`` (replication factor 3, or ``assignment``) with ``records`` records per partition, once
    every partition has its 3 replicas in sync; answers the seconds it took."""
    started = time.monotonic()
    admin = AdminClient(cluster.client_config())
    layout = {"replica_assignment": assignment} if assignment else {}
    first = NewTopic(topic, min(partitions, STEP), **layout)
    admin.create_topics([first], operation_timeout=600, request_timeout=600)[topic].result(timeout=900)
    for count in range(2 * STEP, partitions + STEP, STEP):
        more = NewPartitions(topic, min(count, partitions))
        admin.create_partitions([more], operation_timeout=600, request_timeout=600)[topic].result(timeout=900)
    while True:
        described = admin.list_topics(topic=topic, timeout=120).topics[topic].partitions
        if len(described) == partitions and all(len(p.isrs) == 3 for p in described.values()):
            break
        time.sleep(1)
    settings = {"acks": "all", "linger.ms": 20, "queue.buffering.max.messages": 1_000_000}
    producer = Producer({**cluster.client_config(), **settings})
    for partition in range(partitions):
        for _ in range(records):
            _produce(producer, topic, partition)
        producer.poll(0)
    if remaining := producer.flush(600):
        raise RuntimeError(f"{remaining} records to {topic} not acknowledged")
    return time.monotonic() - started


def _produce(producer: Producer, topic: str, partition: int) -> None:
    """One record to ``partition``, once the producer's metadata knows it: a partition just added can be
    unknown to it for a while."""
    for _ in range(120):
        try:
            producer.produce(topic, b"x", partition=partition)
            return
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError._UNKNOWN_PARTITION:
                raise
            producer.poll(1)
    raise RuntimeError(f"{topic}-{partition} stayed unknown to the producer for two minutes")


class JavaAdmin:
    """``DeleteRecordsBench.java`` in one JVM (Java's source launcher, Kafka's class path): connected and
    warmed up by ``start``; ``delete`` runs one ``Admin.deleteRecords`` and answers the seconds the JVM
    measured."""

    def __init__(self, cluster: KafkaCluster, topic: str, partitions: int) -> None:
        command = [
            "java", "-Xmx512m", "-cp", cluster.classpath, str(JAVA_ADMIN),
            cluster.bootstrap, str(cluster.admin_properties), topic, str(partitions),
        ]  # fmt: skip
        self.log = cluster.folder / f"java-admin-{topic}.log"
        with self.log.open("w") as errors:
            self.process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, text=True
            )

    def start(self) -> None:
        if (line := self._line()) != "ready":
            raise RuntimeError(f"the Java Admin harness answered {line!r}")

    def delete(self, offset: int) -> float:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{offset}\n")
        self.process.stdin.flush()
        return float(self._line()) / 1000

    def _line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if not line:
            code, said = self.process.wait(), self.log.read_text()[-4000:]
            raise RuntimeError(f"the Java Admin harness exited with {code}; its last words:\n{said}")
        return line

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
