"""The service's Spark tests: pull mode, and push mode end to end with kafka-purge-spark's listener (the
client's own tests are in clients/spark/tests). Fixtures: one SparkSession for the whole run (local[2],
UI off, quiet), the emulated Kafka cluster as a process (Spark's Python workers reach it over TCP, and
blocking Spark calls from the test never stall it), and helpers to produce records and commit group
offsets with kafka-python.

Every test here is marked ``spark`` and skipped when pyspark or Java is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from child_process import running

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java", allow_module_level=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.spark)
            # kafka-python reads its schemas with a deprecated importlib.resources call
            item.add_marker(pytest.mark.filterwarnings("ignore::DeprecationWarning"))


def wait_until(check: Callable[[], Any], seconds: float = 60.0, message: str = "condition") -> Any:
    deadline = time.monotonic() + seconds
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < deadline, f"{message} not reached within {seconds} s"
        time.sleep(0.1)


class Emulator:
    """The emulated cluster process: bootstrap servers and its HTTP control API."""

    def __init__(self, bootstrap: str, control: str) -> None:
        self.bootstrap = bootstrap
        self.control = control

    def create_topic(self, name: str, partitions: int) -> None:
        response = httpx.post(f"{self.control}/topics", json={"name": name, "partitions": partitions})
        assert response.status_code in (200, 201), response.text

    def state(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.control}/state").json())

    def log_start_offsets(self, topic: str) -> dict[int, int]:
        from kafka import TopicPartition

        consumer = kafka_consumer(self.bootstrap)
        try:
            partitions = sorted(consumer.partitions_for_topic(topic) or [])
            found = consumer.beginning_offsets([TopicPartition(topic, p) for p in partitions])
            return {tp.partition: offset for tp, offset in found.items()}
        finally:
            consumer.close()

    def produce(self, topic: str, values: list[bytes], partitions: int) -> None:
        from kafka import KafkaProducer

        producer = KafkaProducer(
            bootstrap_servers=self.bootstrap, acks="all", linger_ms=0, enable_idempotence=False
        )
        try:
            sent = [producer.send(topic, v, partition=i % partitions) for i, v in enumerate(values)]
            producer.flush()
            for future in sent:
                future.get(timeout=10)
        finally:
            producer.close()

    def commit(self, group: str, offsets: dict[tuple[str, int], int]) -> None:
        """Commit ``offsets`` for ``group`` (a simple consumer, no membership), as a slow reader would."""
        from kafka import KafkaConsumer, TopicPartition
        from kafka.structs import OffsetAndMetadata

        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=group, enable_auto_commit=False)
        try:
            consumer.commit(
                {TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()}
            )
        finally:
            consumer.close()


def kafka_consumer(bootstrap: str) -> Any:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    consumer.topics()
    return consumer


@pytest.fixture(scope="session")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    folder = tmp_path_factory.mktemp("emulator")
    command = [sys.executable, "-m", "kafka_emulator", "--brokers", "3"]
    with running(command, {**os.environ, "PYTHONPATH": str(ROOT)}, folder) as process:
        ready = json.loads(process.wait_for_line(r"^\{.*\"bootstrap\".*\}$").group(0))
        yield Emulator(ready["bootstrap"], ready["control"])


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The one SparkSession of the run; the test-only Kafka source is registered as ``testkafka``."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    paths = [str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    from kafka_source import KafkaSource
    from pyspark.sql import SparkSession

    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = (
            SparkSession.builder.master("local[2]")
            .appName("kafka-purge-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.warehouse.dir", str(warehouse))
            .config("spark.driver.memory", "1g")
            .config("spark.sql.streaming.stopTimeout", "30s")
            .getOrCreate()
        )
    session.sparkContext.setLogLevel("ERROR")
    session.dataSource.register(KafkaSource)
    try:
        yield session
    finally:
        for query in session.streams.active:
            query.stop()
        session.stop()
