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
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.spark import ROOT, Emulator, running

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
