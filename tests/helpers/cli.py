"""Helpers of the ``kafka-purge`` client command tests: the service and an emulator as processes, the
command run as a subprocess, or on a pseudo-terminal whose bytes a VT100 screen (pyte) shows as a user
would see them."""

from __future__ import annotations

import fcntl
import json
import os
import select
import struct
import subprocess
import sys
import termios
import time
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pyte

from helpers.demo_processes import (
    ROOT,
    get_or_none,
    kafka_purge,
    produce_records,
    purge_env,
    running,
    service_url,
    wait_until,
)

COLUMNS, ROWS = 120, 40


@dataclass(frozen=True)
class Service:
    url: str
    bootstrap: str
    dir: Path
    control: str  # the emulator's control API

    def fail_next_deletion(self, topic: str, partition: int, error: str) -> None:
        """The leader of ``topic``-``partition`` answers its next DeleteRecords with ``error``."""
        state = httpx.get(f"{self.control}/state").json()
        [placement] = [p for p in state["topics"][topic]["partitions"] if p["partition"] == partition]
        fault = {"broker": placement["leader"], "api": "DeleteRecords", "error": error, "count": 1}
        httpx.post(f"{self.control}/faults", json=fault).raise_for_status()


@contextmanager
def cli_service(
    tmp: Path, topics: Mapping[str, int], records: int = 10, **service_env: str
) -> Iterator[Service]:
    """An emulator with ``topics`` (name: partitions, ``records`` in each partition) and the service on it
    as cluster ``demo`` (``service_env`` added to its environment); the dev client ``admin`` is a super
    user."""
    topology = tmp / "topology.yaml"
    listed = [{"name": name, "partitions": count} for name, count in topics.items()]
    topology.write_text(json.dumps({"topics": listed}), encoding="utf-8")
    emulator_cmd = [sys.executable, "-m", "kafka_emulator", "--brokers", "3", "--config", str(topology)]
    with running(emulator_cmd, {**os.environ, "PYTHONPATH": str(ROOT)}, tmp) as emulator:
        ready = json.loads(emulator.wait_for_line(r"^\{.*\"bootstrap\".*\}$").group(0))
        bootstrap = ready["bootstrap"]
        for topic, partitions in topics.items():
            produce_records(bootstrap, topic, partitions, records)
        clusters = json.dumps({"demo": {"bootstrap_servers": bootstrap}})
        env = purge_env(tmp, PURGE_CLUSTERS=clusters, **service_env)
        with running(kafka_purge("serve", "--port", "0"), env, tmp) as process:
            url = service_url(process)
            wait_until(lambda: get_or_none(f"{url}/healthz"))
            yield Service(url=url, bootstrap=bootstrap, dir=tmp, control=ready["control"])


def token(service: Service, client: str = "admin", secret: str = "admin-secret") -> str:
    grant = httpx.post(
        f"{service.url}/oauth/token", data={"grant_type": "client_credentials"}, auth=(client, secret)
    )
    return str(grant.json()["access_token"])


def cli_env(service: Service, **extra: str) -> dict[str, str]:
    """The command's environment: no PURGE_* of the test run, the service's URL, admin's credentials."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    env.update(PYTHONPATH=str(ROOT), PURGE_URL=service.url, PURGE_CLIENT_ID="admin")
    env.update(PURGE_CLIENT_SECRET="admin-secret", PURGE_DEFAULT_CLUSTER="demo")
    return env | extra


def run_cli(
    service: Service, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``kafka-purge ARGS`` with pipes (no terminal), stdin empty unless given."""
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        env=env if env is not None else cli_env(service),
        cwd=service.dir,
        input=stdin or "",
        capture_output=True,
        text=True,
        timeout=60,
    )


@dataclass(frozen=True)
class TerminalRun:
    returncode: int
    output: bytes

    def screen(self) -> list[str]:
        """The lines a COLUMNS x ROWS terminal shows at the end, trailing blanks removed."""
        screen = pyte.Screen(COLUMNS, ROWS)
        pyte.ByteStream(screen).feed(self.output)
        lines = [line.rstrip() for line in screen.display]
        while lines and not lines[-1]:
            lines.pop()
        return lines


def run_on_terminal(
    command: list[str], env: dict[str, str], cwd: Path, answer: bytes | None = None, timeout: float = 60
) -> TerminalRun:
    """``command`` with stdin, stdout and stderr on one pseudo-terminal of COLUMNS x ROWS; once it asks
    ``[y/N]``, ``answer`` is typed."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")} | {"TERM": "xterm-256color"}
    process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd)
    os.close(slave)
    output = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every holder of the terminal's other end has closed it
                break
            if not chunk:
                break
            output += chunk
            if answer is not None and b"[y/N]" in output:
                os.write(master, answer)
                answer = None
        returncode = process.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    return TerminalRun(returncode, output)


def commit_offsets(bootstrap: str, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Commit ``group``'s offsets as a consumer would (kafka-python), without staying a member."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka import KafkaConsumer, TopicPartition
        from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        consumer.commit({TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()})
    finally:
        consumer.close()
