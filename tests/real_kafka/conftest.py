"""The real Apache Kafka cluster of this folder's tests (``helpers.kafka_cluster``): started once per
test session, on first use; stopped at the end. Its folder (logs and data) is removed when every test
passed and kept, with its path and each node's last errors printed, when one failed. The start-up time is
printed in the terminal summary.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.kafka_cluster import KafkaCluster

STARTED: list[KafkaCluster] = []


@pytest.fixture(scope="session")
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


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for cluster in STARTED:
        terminalreporter.write_line(
            f"real Kafka: {len(cluster.nodes)} KRaft nodes started in {cluster.started_in:.1f} s"
        )
        if terminalreporter.stats.get("failed") and cluster.folder.exists():
            terminalreporter.write_line(f"real Kafka: broker logs kept in {cluster.folder}")
            for node in cluster.nodes:
                errors = [
                    line for line in node.log.read_text(errors="replace").splitlines() if " ERROR " in line
                ]
                for line in errors[-5:]:
                    terminalreporter.write_line(f"  node {node.node_id}: {line}")
