"""A Spark job (``tests/real_kafka/spark_job.py``, a driver program) as a child process on the Python of one
PySpark line, asked to run Structured Streaming queries on Spark's own Kafka source. No tests here.

Each PySpark line runs in the venv ``make`` installs for it; the connector's jars are the files
``scripts/spark-kafka-classpath`` resolved from Maven Central for that PySpark's version.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers.service_processes import ROOT

JOB = ROOT / "tests" / "real_kafka" / "spark_job.py"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kafka-purge"
# The PySpark lines the service's Spark tests run on: the main venv's (4.x) and PySpark 3.5's venv.
LINES = {"4": Path(sys.executable), "3.5": ROOT / ".venv-spark35" / "bin" / "python"}


def pyspark_version(python: Path) -> str:
    command = [str(python), "-c", "import pyspark; print(pyspark.__version__)"]
    return subprocess.run(command, check=True, capture_output=True, text=True, timeout=120).stdout.strip()


def connector_jars(version: str) -> list[str]:
    """The files of Spark's Kafka connector for PySpark ``version``, as ``make spark-kafka`` wrote them."""
    path = CACHE / f"spark-kafka-{version}.classpath"
    if not path.exists():
        raise AssertionError(f"{path} is missing: 'make spark-kafka' resolves Spark's Kafka connector")
    return path.read_text(encoding="utf-8").strip().split(os.pathsep)


def coordinates(jars: list[str]) -> str:
    """The Maven coordinates of the connector among ``jars``, as ``spark.jars.packages`` takes them."""
    name = next(Path(jar).name for jar in jars if "/spark-sql-kafka-0-10_" in jar)
    artifact, version = name.removesuffix(".jar").rsplit("-", 1)
    return f"org.apache.spark:{artifact}:{version}"


@dataclass
class SparkDriver:
    """The child process; ``ask`` sends one command and returns its answer."""

    process: subprocess.Popen[str]
    answers: queue.Queue[dict[str, Any]] = field(default_factory=queue.Queue)

    def __post_init__(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("@@ "):
                self.answers.put(json.loads(line[3:]))

    def ask(self, command: dict[str, Any], timeout: float = 240.0) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return self.answer(timeout)

    def answer(self, timeout: float) -> dict[str, Any]:
        try:
            return self.answers.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the Spark driver did not answer in {timeout:.0f} s") from None

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)


def start_driver(python: Path, setup: dict[str, Any], folder: Path) -> tuple[SparkDriver, dict[str, Any]]:
    """A driver on ``python`` set up with ``setup`` (``{"jars": [...]}`` or ``{"packages": "..."}``), its
    Spark logs in ``folder``; the repository's kafka_purge_spark comes first on its path."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "clients" / "spark" / "src"),
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    process = subprocess.Popen(
        [str(python), str(JOB)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=(folder / "spark.log").open("w"),
        text=True,
        cwd=folder,
        env=env,
    )
    driver = SparkDriver(process)
    assert process.stdin is not None
    process.stdin.write(json.dumps(setup) + "\n")
    process.stdin.flush()
    try:
        ready = driver.answer(300)
    except AssertionError:
        driver.close()
        log = (folder / "spark.log").read_text(errors="replace")[-4000:]
        raise AssertionError(f"the Spark driver did not start:\n{log}") from None
    return driver, ready
