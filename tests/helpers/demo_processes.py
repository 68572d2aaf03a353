"""Helpers of the end-to-end tests that run ``kafka-purge`` and the emulator as processes."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from aiokafka import AIOKafkaProducer

from helpers.child_process import Process, running

__all__ = [
    "ROOT",
    "DemoProcess",
    "demo_process",
    "get_or_none",
    "kafka_purge",
    "produce_records",
    "purge_env",
    "running",
    "service_url",
    "wait_until",
]

ROOT = Path(__file__).resolve().parents[2]


def purge_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    return {
        **env,
        "PYTHONPATH": str(ROOT),
        "PURGE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'db' / 'purge.db'}",
        "PURGE_AUTH_DEV_ISSUER": "true",
        "PURGE_AUTH_DEV_CLIENTS": '{"admin": "admin-secret"}',
        "PURGE_WORKER_POLL_INTERVAL_SECONDS": "0.05",
        "PURGE_SUPER_USERS": "User:admin",
        **extra,
    }


def kafka_purge(*args: str) -> list[str]:
    return [sys.executable, "-m", "app", *args]


def service_url(process: Process) -> str:
    port = process.wait_for_line(r"serving HTTP on [\d.]+:(\d+)").group(1)
    return f"http://127.0.0.1:{port}"


def wait_until(check: Any, seconds: float = 30.0) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < deadline, "condition not reached before the deadline"
        time.sleep(0.1)


def get_or_none(url: str) -> httpx.Response | None:
    try:
        return httpx.get(url, timeout=2)
    except httpx.TransportError:
        return None


def produce_records(bootstrap: str, topic: str, partitions: int, records: int) -> None:
    async def produce() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
        await producer.start()
        try:
            sent = [
                await producer.send(topic, f"record-{n}".encode(), partition=partition)
                for partition in range(partitions)
                for n in range(records)
            ]
            await asyncio.gather(*sent)
        finally:
            await producer.stop()

    asyncio.run(produce())


DEMO_READY_SECONDS = 60.0


class DemoProcess:
    """``kafka-purge demo`` on a free port, with its standard output (the banner) read as it comes."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: list[str] = []
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            if "Press Ctrl-C" in line:
                self.ready.set()
        self.ready.set()

    def find(self, label: str) -> str:
        """The first word after ``label`` in the banner."""
        pattern = re.compile(rf"{re.escape(label)}\s+(\S+)")
        for line in self.lines:
            match = pattern.search(line)
            if match:
                return match.group(1)
        raise AssertionError(f"{label!r} not in the banner:\n{''.join(self.lines)}")

    @property
    def base_url(self) -> str:
        return self.find("API base URL:")

    @property
    def control_url(self) -> str:
        return self.find("Emulator control API:").removesuffix("/state")


@contextmanager
def demo_process(tmp_path: Path) -> Iterator[DemoProcess]:
    """A running demo, stopped with Ctrl-C (SIGINT) afterwards."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    process = subprocess.Popen(
        [*kafka_purge("--log-level", "WARNING", "demo"), "--port", "0", "--data-dir", str(tmp_path)],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    running_demo = DemoProcess(process)
    try:
        assert running_demo.ready.wait(DEMO_READY_SECONDS), "the demo did not come up"
        assert process.poll() is None, "".join(running_demo.lines)
        yield running_demo
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)  # the demo stops the service, then its emulator
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
