"""Helpers of the end-to-end tests that run ``kafka-purge`` and the emulator as processes."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from aiokafka import AIOKafkaProducer

from helpers.child_process import Process, running

__all__ = [
    "ROOT",
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
