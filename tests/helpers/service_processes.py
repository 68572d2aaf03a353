"""Real processes for the crash and two-instance tests: an emulator process, `kafka-purge serve` processes,
a throw-away PostgreSQL database, and read-backs straight from the service's database. No tests here."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from aiokafka import AIOKafkaProducer
from sqlalchemy import func, select

from app.adapters.db.models import AuditEvent, Deletion, PartitionDeletion
from app.adapters.db.session import create_engine, make_sessionmaker, read_session
from app.audit import verify_chain
from helpers import child_process
from helpers.databases import postgresql_database

ROOT = Path(__file__).resolve().parents[2]
CLIENT, SECRET = "alice", "alice-secret"


class Process(child_process.Process):
    """A child process whose output is collected by a thread (so its pipe never fills up), killed at the
    end (``kill``), and whose death while waited for is a failure naming its last lines."""

    def wait_for(self, pattern: str, timeout_s: float = 60.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if match := re.search(pattern, line):
                    return match
            if self.popen.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"{pattern!r} not seen:\n{''.join(self.lines[-40:])}")

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait(timeout=30)


def spawn(args: list[str], env: dict[str, str], cwd: Path) -> Process:
    return Process(args, env, cwd)


@dataclass(frozen=True)
class Send:
    """One partition of one DeleteRecords request as the broker saw it; times are the emulator's
    monotonic clock, ``answered`` is infinite for a request never answered."""

    client_id: str | None
    broker: int
    partition: int
    offset: int
    received: float
    answered: float


@dataclass
class Emulator:
    process: Process
    bootstrap: str
    control: str

    def state(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.control}/state", timeout=30).json())

    def log_start_offsets(self, topic: str) -> dict[int, set[int]]:
        """Partition -> the set of its replicas' log start offsets."""
        partitions = self.state()["topics"][topic]["partitions"]
        return {
            p["partition"]: {r["log_start_offset"] for r in p["replica_states"].values()} for p in partitions
        }

    def delete_records_sends(self, topic: str) -> list[Send]:
        """Every partition of ``topic`` the brokers received in a DeleteRecords request, from the
        emulator's request log (all pages; the log must not have dropped any request)."""
        sends: list[Send] = []
        after = 0
        while True:
            page = httpx.get(f"{self.control}/requests", params={"after": after}, timeout=30).json()
            assert page["dropped"] == 0, "the emulator's request log overflowed"
            for request in page["requests"]:
                answered = request["answered"]
                sends.extend(
                    Send(
                        request["client_id"],
                        request["broker"],
                        p["partition"],
                        p["offset"],
                        request["received"]["monotonic"],
                        answered["monotonic"] if answered else float("inf"),
                    )
                    for p in request["partitions"]
                    if p["topic"] == topic
                )
            if page["next_after"] is None:
                return sends
            after = page["next_after"]

    def fault(
        self, broker: int, api: str, *, delay_ms: float = 0, count: int = 1, error: str | None = None
    ) -> None:
        body = {"broker": broker, "api": api, "delay_ms": delay_ms, "count": count, "error": error}
        httpx.post(f"{self.control}/faults", json=body, timeout=10).raise_for_status()


@contextmanager
def emulator_process(tmp_path: Path, topic: str, partitions: int) -> Iterator[Emulator]:
    config = tmp_path / "topology.yaml"
    config.write_text(
        json.dumps(
            {"brokers": 3, "topics": [{"name": topic, "partitions": partitions, "replication_factor": 3}]}
        )
    )
    args = [sys.executable, "-m", "kafka_emulator", "--config", str(config), "--log-level", "WARNING"]
    process = spawn(args, {**os.environ, "PYTHONPATH": str(ROOT)}, tmp_path)
    try:
        ready = json.loads(process.wait_for(r"^\{.*\"bootstrap\".*\}$", 60).group(0))
        yield Emulator(process, ready["bootstrap"], ready["control"])
    finally:
        process.kill()


async def produce(bootstrap: str, topic: str, partitions: int, records: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20)
    await producer.start()
    try:
        sent = [
            await producer.send(topic, b"x", partition=p) for p in range(partitions) for _ in range(records)
        ]
        await asyncio.gather(*sent)
    finally:
        await producer.stop()


@asynccontextmanager
async def database_url(kind: str, tmp_path: Path) -> AsyncIterator[str]:
    """An empty database of that kind for a service process to migrate."""
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'purge.db'}"
        return
    async with postgresql_database() as url:
        yield url


def service_env(
    db_url: str, bootstrap: str, *, client_id: str = "kafka-purge", **worker: str
) -> dict[str, str]:
    """``client_id`` is the service's Kafka client id, which the emulator's request log records."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    cluster = {"demo": {"bootstrap_servers": bootstrap, "request_timeout_ms": 10_000, "client_id": client_id}}
    return {
        **env,
        "PYTHONPATH": str(ROOT),
        "PURGE_DATABASE_URL": db_url,
        "PURGE_CLUSTERS": json.dumps(cluster),
        "PURGE_AUTH_DEV_ISSUER": "true",
        "PURGE_AUTH_DEV_CLIENTS": json.dumps({CLIENT: SECRET}),
        # These tests are about execution, not authorization: the caller may delete anything.
        "PURGE_SUPER_USERS": f"User:{CLIENT}",
        **{f"PURGE_WORKER_{name.upper()}": value for name, value in worker.items()},
    }


@dataclass
class Service:
    process: Process
    base: str | None

    def token(self) -> str:
        response = httpx.post(
            f"{self.base}/oauth/token",
            data={"grant_type": "client_credentials"},
            auth=(CLIENT, SECRET),
            timeout=30,
        )
        response.raise_for_status()
        return str(response.json()["access_token"])


@dataclass
class StartingService:
    """A ``kafka-purge serve`` process spawned, not yet ready: its start is seconds of imports."""

    process: Process
    workers_only: bool

    def ready(self) -> Service:
        if self.workers_only:
            self.process.wait_for(r"executor \S+ running")
            return Service(self.process, None)
        port = self.process.wait_for(r"serving HTTP on [\d.]+:(\d+)").group(1)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    return Service(self.process, base)
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "".join(self.process.lines[-40:])
            time.sleep(0.05)


def spawn_service(
    env: dict[str, str],
    cwd: Path,
    *,
    workers_only: bool = False,
    api_only: bool = False,
    log_level: str = "INFO",
) -> StartingService:
    mode = ["--workers-only"] if workers_only else ["--port", "0", *(["--api-only"] if api_only else [])]
    process = spawn([sys.executable, "-m", "app", "--log-level", log_level, "serve", *mode], env, cwd)
    return StartingService(process, workers_only)


def start_service(env: dict[str, str], cwd: Path, **options: Any) -> Service:
    """``spawn_service``'s options; returns once the instance is ready."""
    return spawn_service(env, cwd, **options).ready()


async def start_services(
    envs: list[dict[str, str]], cwd: Path, meanwhile: Awaitable[object], **options: Any
) -> list[Service]:
    """Instances spawned together (``spawn_service``'s options), ``meanwhile`` (the test's records
    produced) awaited during their seconds of imports; each ready when this returns, all killed if one
    is not."""
    starting = [spawn_service(env, cwd, **options) for env in envs]
    try:
        await meanwhile
        return [instance.ready() for instance in starting]
    except BaseException:
        for instance in starting:
            instance.process.kill()
        raise


class Database:
    """Read-backs from the service's database, as the tests' referee."""

    def __init__(self, url: str) -> None:
        self.engine = create_engine(url, pool_size=2)
        self.sessionmaker = make_sessionmaker(self.engine)

    async def close(self) -> None:
        await self.engine.dispose()

    async def counts(self, deletion_id: str) -> dict[str, int]:
        query = (
            select(PartitionDeletion.status, func.count())
            .where(PartitionDeletion.deletion_id == deletion_id)
            .group_by(PartitionDeletion.status)
        )
        async with read_session(self.sessionmaker) as session:
            return {str(status): int(count) for status, count in (await session.execute(query)).all()}

    async def status(self, deletion_id: str) -> str:
        async with read_session(self.sessionmaker) as session:
            return (
                await session.execute(select(Deletion.status).where(Deletion.id == deletion_id))
            ).scalar_one()

    async def partitions(self, deletion_id: str) -> list[PartitionDeletion]:
        query = select(PartitionDeletion).where(PartitionDeletion.deletion_id == deletion_id)
        async with read_session(self.sessionmaker) as session:
            return list((await session.execute(query)).scalars().all())

    async def chain_ok(self) -> bool:
        async with read_session(self.sessionmaker) as session:
            return (await verify_chain(session)).ok

    async def wait_status(self, deletion_id: str, statuses: set[str], timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        while (status := await self.status(deletion_id)) not in statuses:
            assert time.monotonic() < deadline, f"deletion still {status}: {await self.counts(deletion_id)}"
            await asyncio.sleep(0.1)
        return status

    async def wait_succeeded(self, deletion_id: str, *, at_least: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while (await self.counts(deletion_id)).get("succeeded", 0) < at_least:
            assert time.monotonic() < deadline, await self.counts(deletion_id)
            await asyncio.sleep(0.05)

    async def audit_details(self, deletion_id: str, action: str) -> list[dict[str, Any]]:
        query = (
            select(AuditEvent.details)
            .where(AuditEvent.deletion_id == deletion_id, AuditEvent.action == action)
            .order_by(AuditEvent.id)
        )
        async with read_session(self.sessionmaker) as session:
            return [dict(details) for details in (await session.execute(query)).scalars().all()]
