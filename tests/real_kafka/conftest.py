"""The real Apache Kafka cluster of this folder's tests (``helpers.kafka_cluster``): started on first use,
once for the folder (a package, whose tests run one after another on one pytest-xdist worker); stopped
after its last test, so that its brokers take no CPU from the rest of the suite. Its folder (logs and
data) is removed when every test passed and kept, with its path and each node's last errors printed,
when one failed. The start-up time is printed in the terminal summary.

``purge_service``: the service as in production, once for the folder: ``kafka-purge serve`` on a loopback
port, on PostgreSQL, with the cluster ``real`` reached over SASL/SCRAM-SHA-512 as the user ``purge``,
whose Kafka ACLs (created with Kafka's Admin API) allow what the service does and nothing else. Its
``PURGE_SPARK_CHECKPOINT_ROOTS`` is ``spark_checkpoints``, a folder of its own (Spark pull mode).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import session_summary
from helpers.connect_worker import STARTED as CONNECT_WORKERS
from helpers.kafka_cluster import KafkaCluster
from helpers.kafka_faults import service_database
from helpers.real_kafka import CLUSTER, SERVICE_ACLS, SERVICE_USER, cluster_settings, grant
from helpers.service_processes import ROOT, Service, service_env, start_service

STARTED: list[KafkaCluster] = []


@pytest.fixture(scope="package")
def kafka_cluster(request: pytest.FixtureRequest) -> Iterator[KafkaCluster]:
    folder = Path(tempfile.mkdtemp(prefix="kafka-purge-real-kafka-"))
    cluster = KafkaCluster(folder)
    try:
        cluster.start()
        STARTED.append(cluster)
        yield cluster
    finally:
        cluster.close()
        if request.session.testsfailed == 0:
            shutil.rmtree(folder, ignore_errors=True)


def summary(failed: bool) -> list[str]:
    """The start-up times of this process's cluster and Connect workers; where their logs were kept, with
    each node's last errors, when a test failed."""
    lines = []
    for cluster in STARTED:
        lines.append(f"real Kafka: {len(cluster.nodes)} KRaft nodes started in {cluster.started_in:.1f} s")
        if failed and cluster.folder.exists():
            lines.append(f"real Kafka: broker logs kept in {cluster.folder}")
            for node in cluster.nodes:
                errors = [
                    line for line in node.log.read_text(errors="replace").splitlines() if " ERROR " in line
                ]
                lines.extend(f"  node {node.node_id}: {line}" for line in errors[-5:])
    for worker in CONNECT_WORKERS:
        started = f"started in {worker.started_in:.1f} s" if worker.started_in else "did not start"
        lines.append(f"Kafka Connect: worker {started}")
        if worker.folder.exists():
            lines.append(f"Kafka Connect: worker log kept in {worker.log}")
    return lines


session_summary.SOURCES.append(summary)


@pytest.fixture(scope="package")
def spark_checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spark-checkpoints")


@pytest.fixture(scope="package")
def purge_service(kafka_cluster: KafkaCluster, spark_checkpoints: Path) -> Iterator[Service]:
    grant(kafka_cluster, f"User:{SERVICE_USER}", SERVICE_ACLS)
    with service_database() as url:
        env = service_env(url, kafka_cluster.bootstrap)
        env["PURGE_CLUSTERS"] = json.dumps({CLUSTER: cluster_settings(kafka_cluster)})
        env["PURGE_SPARK_CHECKPOINT_ROOTS"] = str(spark_checkpoints)
        service = start_service(env, ROOT)
        try:
            yield service
        finally:
            service.process.kill()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The first test of this folder also starts the session's cluster and service (tens of seconds on a
    loaded machine): every test here gets 300 s, not the suite's 120."""
    for item in items:
        if item.nodeid.startswith("tests/real_kafka/") and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(300))
