"""``kafka-purge-audit-report`` unchanged on a Spark standalone cluster (``--master spark://…``): a real
master and worker from the installed PySpark, the job run as users run it (the console script), on an
audit export of 10,000 events (test_audit_report.py runs the job on 100,000 events in local mode; here
what matters is where the work runs). The report matches the plain-Python recount, and the master and
the worker show that the work ran on the cluster's executors, not in the driver."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from audit_events import assert_report_matches, generate
from standalone import StandaloneCluster, standalone_cluster

from kafka_purge_spark import audit_report

EVENTS = 10_000
# The cluster's 2 cores: Spark's default of 200 shuffle partitions makes 200 tasks of a few rows each per
# stage, the job's cost on a small cluster.
SHUFFLE_PARTITIONS = 4


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    with standalone_cluster(tmp_path_factory.mktemp("spark-standalone")) as running:
        yield running


def test_the_report_job_runs_on_a_standalone_cluster(cluster: StandaloneCluster, tmp_path: Path) -> None:
    export = tmp_path / "export.ndjson"
    events = generate(export, EVENTS, seed=5)
    command = Path(sys.executable).with_name("kafka-purge-audit-report")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    started = time.monotonic()
    arguments = ["--input", str(export), "--output", str(tmp_path / "report"), "--master", cluster.url]
    arguments += ["--conf", f"spark.sql.shuffle.partitions={SHUFFLE_PARTITIONS}"]
    finished = subprocess.run(
        [str(command), *arguments],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr[-4000:]
    print(f"audit report on {EVENTS} events on {cluster.url}: {time.monotonic() - started:.1f} s")
    rows = pq.read_table(tmp_path / "report" / "report.parquet").to_pylist()
    assert f"{len(rows)} report rows written" in finished.stdout
    assert_report_matches(rows, events, audit_report.METRICS)

    applications = [app for app in cluster.state()["completedapps"] if app["name"] == audit_report.APP_NAME]
    assert len(applications) == 1, cluster.state()["completedapps"]
    executors = list((cluster.work_dir / applications[0]["id"]).iterdir())
    assert executors, "the worker ran no executor for the job"
