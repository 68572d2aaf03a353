"""A Spark standalone cluster on loopback: one master and one worker, started with the classes Spark's
``sbin/start-master.sh`` and ``sbin/start-worker.sh`` run (``org.apache.spark.deploy.master.Master``,
``org.apache.spark.deploy.worker.Worker``) through the installed PySpark's ``bin/spark-class``; the pip
distribution of PySpark ships ``spark-class`` and the jars, not the ``sbin`` start scripts.

The master's web UI answers ``/json/``: the workers with their state, and the applications that ran.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent
STARTUP_SECONDS = 120.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class StandaloneCluster:
    url: str  # spark://127.0.0.1:PORT, what --master takes
    web: str  # the master's web UI
    work_dir: Path  # the worker's folder: one app-* folder per application its executors ran

    def state(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.web}/json/", timeout=10) as answer:
            state: dict[str, Any] = json.load(answer)
        return state


def _start(folder: Path, name: str, arguments: list[str]) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        # The master's REST submission server (port 6066 by default) is not needed and would clash.
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
        "SPARK_LOG_DIR": str(folder),
    }
    log = (folder / f"{name}.log").open("wb")
    return subprocess.Popen(
        [str(SPARK_HOME / "bin" / "spark-class"), *arguments], stdout=log, stderr=subprocess.STDOUT, env=env
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _wait_for_worker(
    cluster: StandaloneCluster, processes: list[subprocess.Popen[bytes]], folder: Path
) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in folder.glob("*.log"))
                raise RuntimeError(f"a Spark standalone process ended with {process.returncode}:\n{logs}")
        try:
            if any(worker["state"] == "ALIVE" for worker in cluster.state()["workers"]):
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"no Spark worker registered with {cluster.url} within {STARTUP_SECONDS} s")


@contextmanager
def standalone_cluster(folder: Path, cores: int = 2, memory: str = "2g") -> Iterator[StandaloneCluster]:
    """A master and one worker offering ``cores`` and ``memory`` to executors; stopped on exit."""
    port, web_port = free_port(), free_port()
    cluster = StandaloneCluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{web_port}", folder / "work")
    cluster.work_dir.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        master = _start(
            folder,
            "master",
            ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
             "--webui-port", str(web_port)],
        )  # fmt: skip
        stack.callback(_stop, master)
        worker = _start(
            folder,
            "worker",
            ["org.apache.spark.deploy.worker.Worker", cluster.url, "--host", "127.0.0.1",
             "--cores", str(cores), "--memory", memory, "--webui-port", str(free_port()),
             "--work-dir", str(cluster.work_dir)],
        )  # fmt: skip
        stack.callback(_stop, worker)
        _wait_for_worker(cluster, [master, worker], folder)
        yield cluster
