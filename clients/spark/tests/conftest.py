"""One SparkSession for the whole run (local[2], UI off, quiet) with the test-only ``OffsetsFileSource``
(``java/``, compiled here against the installed PySpark's jars) on the driver's class path, so the same
streaming tests run on PySpark 3.5 and 4.x."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyspark
import pytest

HERE = Path(__file__).resolve().parent
OFFSETS_SOURCE = "kafkapurge.test.OffsetsFileSource"


def wait_until(check: Callable[[], Any], seconds: float = 60.0, message: str = "condition") -> Any:
    deadline = time.monotonic() + seconds
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < deadline, f"{message} not reached within {seconds} s"
        time.sleep(0.05)


def _javac() -> str:
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "javac") if home else shutil.which("javac")
    if not found or not Path(found).exists():
        pytest.fail("the Spark client tests compile a test source and need a JDK (javac)")
    return found


def compile_offsets_source(target: Path) -> Path:
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    command = [
        _javac(),
        "-nowarn",
        "-cp",
        f"{jars}/*",
        "-d",
        str(target),
        str(HERE / "java" / "OffsetsFileSource.java"),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    return target


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The one SparkSession of the run; ``format(OFFSETS_SOURCE)`` reads the test-only source."""
    from pyspark.sql import SparkSession

    classes = compile_offsets_source(tmp_path_factory.mktemp("classes"))
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = (
            SparkSession.builder.master("local[2]")
            .appName("kafka-purge-spark-tests")
            .config("spark.driver.extraClassPath", str(classes))
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.warehouse.dir", str(warehouse))
            .config("spark.driver.memory", "1g")
            .getOrCreate()
        )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        for query in session.streams.active:
            query.stop()
        session.stop()
