"""Service benchmark: POST -> all-succeeded against the same deletion done directly, and API throughput.

    .venv/bin/python bench/service_bench.py [--sizes 1000,10000] [--databases sqlite,postgresql] [--workers N]
        [--repeat 3] [--fetch-wait-ms 500,20] [--kafka emulator|real]

With ``--kafka real`` the cluster is a real Apache Kafka one the bench starts (``bench/real_kafka.py``:
3 KRaft nodes, SASL/SCRAM), Kafka's own Java ``Admin.deleteRecords`` is a fourth way
(``bench/DeleteRecordsBench.java``), the service runs on PostgreSQL and the API load is skipped.

Everything runs on loopback as real processes: one emulated 3-broker cluster
(``python -m kafka_emulator``, its request log kept to one request) and, per database, one
``kafka-purge serve`` (uvicorn, executor on; ``--workers`` 2 on PostgreSQL, 1 on SQLite). For each size
the same deletion (one log start offset step on every partition of a topic with that many partitions) is
done four ways, in the same run: aiokafka low-level (metadata, then one DeleteRecords per leader, leaders
in parallel), confluent-kafka ``AdminClient.delete_records``, and the service on each database (POST, then
the time until the deletion row says ``succeeded``, read straight from the database every 10 ms). Each way
moves the offsets one step further, so every run deletes real records. Each deletion is done ``--repeat``
times per way (default 3) and the median is the figure compared; every run is printed too. The service's
runs of one size are more than its metadata age apart, so each reads the topic's metadata afresh, as every
direct call does; its first run of the first size is its first deletion after a start.

The deletions are timed at each ``--fetch-wait-ms`` (the emulator's ``replica.fetch.wait.max.ms``), each
on a fresh emulator: first Kafka's 500 ms, where a DeleteRecords (v2) waits until the followers' parked
fetches return with the new log start offset, for the direct calls and the service alike; then the
shortened timing the tests use. Every way's run i starts at the same point of the followers' fetch
cycle (``Phase``): (i + 1/2) / repeat of the way through it, so the ways are compared at the same
phases. ``ratio_to_aiokafka`` divides each way's median by the direct aiokafka call's at the same
timing.

API throughput (at the first timing only): a bounded async load generator (raw keep-alive HTTP/1.1,
fixed concurrency, bounded count and time) sends small POSTs (one partition) and then GETs of those
deletions, with the executor on, then with ``--api-only``: as many as 32 connections get answered (closed
loop), then at the targets' rates, 400 POSTs/s and 1,500 GETs/s for 10 s each, sent at a fixed pace
whatever the answers do (open loop; latency from when each request was due). Prints a JSON report; the
figures in bench/README.md come from it.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import itertools
import json
import os
import re
import secrets
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from aiokafka import AIOKafkaProducer
from aiokafka.client import AIOKafkaClient
from aiokafka.protocol.admin import DeleteRecordsRequest
from aiokafka.structs import TopicPartition
from confluent_kafka import TopicPartition as CfTopicPartition
from confluent_kafka.admin import AdminClient
from real_kafka import JavaAdmin, Target, create_topic, emulator_target, real_cluster

ROOT = Path(__file__).resolve().parents[1]
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
CLIENT, SECRET = "bench", "bench-secret"
METADATA_MAX_AGE_S = 5.0  # the service's default metadata_max_age_ms
# The target loads of the API figures (requests/s) and how long each paced run lasts.
POST_RATE, GET_RATE, PACED_SECONDS = 400, 1_500, 10
# Produced to before each timed deletion: one partition led by each broker, replication factor 3.
PHASE_TOPIC, PHASE_PARTITIONS = "phase", 3


class Child:
    """A child process with its output drained by a thread."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.popen = subprocess.Popen(
            args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.lines: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.append(line)

    def wait_for(self, pattern: str, timeout_s: float = 120) -> re.Match[str]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.popen.poll() is None:
            for line in list(self.lines):
                if match := re.search(pattern, line):
                    return match
            time.sleep(0.05)
        raise RuntimeError(f"{pattern!r} not seen:\n{''.join(self.lines[-30:])}")

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def start_emulator(work: Path, sizes: list[int], fetch_wait_ms: float) -> tuple[Child, str]:
    topics = [{"name": f"bench-{n}", "partitions": n, "replication_factor": 3} for n in sizes]
    topics.append({"name": "api", "partitions": 16, "replication_factor": 3})
    topics.append({"name": PHASE_TOPIC, "partitions": PHASE_PARTITIONS, "replication_factor": 3})
    topology = {"brokers": 3, "replica_fetch_wait_max_ms": fetch_wait_ms, "topics": topics}
    (work / "topology.yaml").write_text(json.dumps(topology))
    args = [
        sys.executable,
        "-m",
        "kafka_emulator",
        "--config",
        str(work / "topology.yaml"),
        "--log-level",
        "WARNING",
        # The request log (test support) keeps up to 500,000 DeleteRecords partitions by default: it
        # would grow through the run, and the emulator's full collections with it, slowing the later
        # deletions (the same direct call 0.21 -> 0.30 s over 30 runs), which are the service's.
        "--request-log-max",
        "1",
    ]
    child = Child(args, {**os.environ, "PYTHONPATH": str(ROOT)}, work)
    return child, json.loads(child.wait_for(r"^\{.*\}$").group(0))["bootstrap"]


async def produce(bootstrap: str, topic: str, partitions: int, records: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=50, max_batch_size=65536)
    await producer.start()
    try:
        futures = [
            await producer.send(topic, b"x", partition=p) for p in range(partitions) for _ in range(records)
        ]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


class Phase:
    """Where in the followers' fetch cycle a timed deletion starts, the same for every way.

    At Kafka's timing a DeleteRecords on an idle topic waits until the followers' parked fetches return
    (up to ``replica.fetch.wait.max.ms``), so a run's figure depends on the point of that cycle it
    starts at. Left alone, that point is set by whatever ran before (the previous run's end plus the
    next client's untimed start-up), which differs from way to way. Before each timed deletion this
    produces one record to every partition of ``PHASE_TOPIC`` (acks=all), which wakes every follower's
    parked fetch, so every fetch cycle restarts then; the run starts ``(run + 1/2) / runs`` of a cycle
    later."""

    def __init__(self, producer: AIOKafkaProducer, fetch_wait_s: float, runs: int) -> None:
        self._producer, self._fetch_wait_s, self._runs = producer, fetch_wait_s, runs

    async def align(self, run: int) -> None:
        sent = [await self._producer.send(PHASE_TOPIC, b"p", partition=p) for p in range(PHASE_PARTITIONS)]
        await asyncio.gather(*sent)
        await asyncio.sleep((run % self._runs + 0.5) / self._runs * self._fetch_wait_s)


@asynccontextmanager
async def phase_of(target: Target, fetch_wait_ms: float, runs: int) -> AsyncIterator[Phase]:
    producer = AIOKafkaProducer(**target.aiokafka, acks="all", linger_ms=0)
    await producer.start()
    try:
        yield Phase(producer, fetch_wait_ms / 1000, runs)
    finally:
        await producer.stop()


Align = Callable[[], Awaitable[None]]


async def direct_aiokafka(target: Target, topic: str, partitions: int, offset: int, align: Align) -> float:
    client = AIOKafkaClient(**target.aiokafka, request_timeout_ms=120_000)
    await client.bootstrap()
    try:
        await align()
        started = time.perf_counter()
        client.add_topic(topic)
        await client.force_metadata_update()
        by_leader: dict[int, list[tuple[int, int]]] = {}
        for p in range(partitions):
            by_leader.setdefault(client.cluster.leader_for_partition(TopicPartition(topic, p)), []).append(
                (p, offset)
            )
        requests = [
            client.send(leader, DeleteRecordsRequest([(topic, parts)], 60_000))
            for leader, parts in by_leader.items()
        ]
        responses = await asyncio.gather(*requests)
        elapsed = time.perf_counter() - started
    finally:
        await client.close()
    errors = [p for r in responses for t in r.topics for p in t[1] if p[2] != 0]
    assert not errors, errors[:5]
    return elapsed


async def direct_confluent(target: Target, topic: str, partitions: int, offset: int, align: Align) -> float:
    admin = AdminClient(target.confluent)
    await asyncio.to_thread(admin.list_topics, timeout=30)  # connected before the clock starts
    await align()
    return await asyncio.to_thread(_delete_confluent, admin, topic, partitions, offset)


def _delete_confluent(admin: AdminClient, topic: str, partitions: int, offset: int) -> float:
    started = time.perf_counter()
    futures = admin.delete_records(
        [CfTopicPartition(topic, p, offset) for p in range(partitions)], request_timeout=120
    )
    for future in futures.values():
        future.result()
    return time.perf_counter() - started


@asynccontextmanager
async def database(kind: str, work: Path) -> AsyncIterator[str]:
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{work / 'bench.db'}"
        return
    name = f"purge_bench_{secrets.token_hex(6)}"
    admin = await asyncpg.connect(PG_ADMIN)
    await admin.execute(f'CREATE DATABASE "{name}"')
    await admin.close()
    try:
        yield f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    finally:
        admin = await asyncpg.connect(PG_ADMIN)
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


def start_service(
    url: str, target: Target, work: Path, *, api_only: bool = False, workers: int = 1
) -> tuple[Child, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    env |= {
        "PYTHONPATH": str(ROOT),
        "PURGE_DATABASE_URL": url,
        "PURGE_CLUSTERS": json.dumps({"demo": target.service}),
        "PURGE_AUTH_DEV_ISSUER": "true",
        "PURGE_AUTH_DEV_CLIENTS": json.dumps({CLIENT: SECRET}),
        "PURGE_SUPER_USERS": f"User:{CLIENT}",  # measures execution, not authorization
    }
    mode = ["--api-only"] if api_only else []
    serve = ["serve", "--port", "0", "--workers", str(workers), *mode]
    child = Child([sys.executable, "-m", "app", "--log-level", "INFO", *serve], env, work)
    base = f"http://127.0.0.1:{child.wait_for(r'serving HTTP on [0-9.]+:([0-9]+)').group(1)}"
    wait_healthy(base)
    return child, base


def wait_healthy(base: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError("the service did not become healthy")


async def token(client: httpx.AsyncClient) -> str:
    response = await client.post(
        "/oauth/token", data={"grant_type": "client_credentials"}, auth=(CLIENT, SECRET)
    )
    response.raise_for_status()
    return str(response.json()["access_token"])


async def service_deletion(
    base: str, url: str, topic: str, partitions: int, offset: int, align: Align
) -> tuple[float, float]:
    """(seconds until the 202, seconds until the deletion succeeded), both from the POST."""
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url)
    body = {
        "cluster": "demo",
        "partitions": [{"topic": topic, "partition": p, "offset": offset} for p in range(partitions)],
        "timeout_ms": 60_000,
        "reason": "benchmark",
    }
    try:
        async with httpx.AsyncClient(base_url=base, timeout=120) as client:
            headers = {"Authorization": f"Bearer {await token(client)}"}
            await align()
            started = time.perf_counter()
            response = await client.post("/v1/deletions", json=body, headers=headers)
            assert response.status_code == 202, response.text[:500]
            accepted = time.perf_counter() - started
            deletion_id = response.json()["id"]
            query = text("SELECT status FROM deletion WHERE id = :id")
            while True:
                async with engine.connect() as conn:
                    status = (await conn.execute(query, {"id": deletion_id})).scalar_one()
                if status not in ("pending", "in_progress"):
                    break
                await asyncio.sleep(0.01)
            elapsed = time.perf_counter() - started
        assert status == "succeeded", status
        return accepted, elapsed
    finally:
        await engine.dispose()


class Connection:
    """A minimal HTTP/1.1 keep-alive client connection for the load generator.

    httpx spends about as much CPU per request as the service itself, so on two cores it would measure
    the load generator; this sends the same bytes for a fraction of the cost (responses here always
    carry a Content-Length).
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    @classmethod
    async def open(cls, base: str) -> Connection:
        url = httpx.URL(base)
        reader, writer = await asyncio.open_connection(url.host, url.port)
        return cls(reader, writer, f"{url.host}:{url.port}")

    async def request(self, method: str, path: str, headers: bytes, body: bytes = b"") -> tuple[int, bytes]:
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Length: {len(body)}\r\n"
        self.writer.write(head.encode() + headers + b"\r\n" + body)
        lines = (await self.reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        return int(lines[0].split()[1]), await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


async def load(
    make: Callable[[Connection, int], Awaitable[int]],
    base: str,
    *,
    count: int,
    concurrency: int = 32,
    max_seconds: float = 15,
) -> dict[str, Any]:
    """``count`` requests (or as many as fit in ``max_seconds``), ``concurrency`` at a time, each worker
    on its own keep-alive connection; ``make`` answers the status code."""
    latencies: list[float] = []
    failures = 0
    next_index = 0
    connections = [await Connection.open(base) for _ in range(concurrency)]
    stop_at = time.perf_counter() + max_seconds
    started = time.perf_counter()

    async def worker(connection: Connection) -> None:
        nonlocal next_index, failures
        while next_index < count and time.perf_counter() < stop_at:
            index, next_index = next_index, next_index + 1
            sent = time.perf_counter()
            status = await make(connection, index)
            latencies.append(time.perf_counter() - sent)
            failures += status >= 300

    try:
        await asyncio.gather(*(worker(c) for c in connections))
    finally:
        for connection in connections:
            connection.close()
    return figures(latencies, failures, time.perf_counter() - started)


def figures(latencies: list[float], failures: int, elapsed: float) -> dict[str, Any]:
    """Count, rate and latency percentiles of one load."""
    ordered = sorted(latencies)
    return {
        "requests": len(ordered),
        "failures": failures,
        "per_second": round(len(ordered) / elapsed, 1),
        "p50_ms": round(1000 * statistics.median(ordered), 1),
        "p99_ms": round(1000 * ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 1),
        "max_ms": round(1000 * ordered[-1], 1),
    }


async def paced_load(
    make: Callable[[Connection, int], Awaitable[int]],
    base: str,
    *,
    rate: float,
    count: int,
    connections: int = 64,
) -> dict[str, Any]:
    """``count`` requests at a fixed ``rate`` (open loop): request i is due at ``start + i / rate`` and
    sent then on an idle keep-alive connection (or as soon as one is free). Its latency counts from when
    it was due, so a service that falls behind shows it in full instead of slowing the sender down (the
    closed loop of ``load`` measures the latency its own concurrency makes at saturation)."""
    latencies: list[float] = []
    failures = 0
    idle: asyncio.Queue[Connection] = asyncio.Queue()
    opened = [await Connection.open(base) for _ in range(connections)]
    for connection in opened:
        idle.put_nowait(connection)

    async def one(index: int, due: float) -> None:
        nonlocal failures
        connection = await idle.get()
        try:
            status = await make(connection, index)
        finally:
            idle.put_nowait(connection)
        latencies.append(time.perf_counter() - due)
        failures += status >= 300

    tasks = []
    started = time.perf_counter()
    try:
        for index in range(count):
            due = started + index / rate
            if (wait := due - time.perf_counter()) > 0:
                await asyncio.sleep(wait)
            tasks.append(asyncio.create_task(one(index, due)))
        await asyncio.gather(*tasks)
    finally:
        for connection in opened:
            connection.close()
    return {"rate": rate, **figures(latencies, failures, time.perf_counter() - started)}


async def api_throughput(base: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        auth = f"Authorization: Bearer {await token(client)}\r\n".encode()
    ids: list[str] = []

    async def post(connection: Connection, index: int) -> int:
        body = {
            "cluster": "demo",
            "partitions": [{"topic": "api", "partition": index % 16, "offset": 0}],
            "reason": "load",
        }
        headers = auth + b"Content-Type: application/json\r\n"
        status, answer = await connection.request("POST", "/v1/deletions", headers, json.dumps(body).encode())
        if status == 202:
            ids.append(json.loads(answer)["id"])
        return status

    async def get(connection: Connection, index: int) -> int:
        status, _ = await connection.request("GET", f"/v1/deletions/{ids[index % len(ids)]}", auth)
        return status

    await load(post, base, count=100, concurrency=8)  # warm-up: connections, caches, JIT-free paths
    posts = await load(post, base, count=3_000)
    gets = await load(get, base, count=10_000)
    # The targets' own load: latency at POST_RATE and GET_RATE requests/s, sent at a fixed pace.
    posts_paced = await paced_load(post, base, rate=POST_RATE, count=POST_RATE * PACED_SECONDS)
    gets_paced = await paced_load(get, base, rate=GET_RATE, count=GET_RATE * PACED_SECONDS)
    return {"small_posts": posts, "gets": gets, "small_posts_paced": posts_paced, "gets_paced": gets_paced}


def note(report: dict[str, Any], section: str, key: str, value: Any) -> None:
    """Record one figure and print it at once (a long run shows progress and keeps what it measured)."""
    report[section][key] = value
    print(json.dumps({section: {key: value}}), file=sys.stderr, flush=True)


def note_runs(report: dict[str, Any], key: str, runs: list[float]) -> None:
    """Record the runs of one way and their median, the figure compared, in the timing's section."""
    section = report["timing"]
    note(report, section, f"{key}_runs", [round(r, 3) for r in runs])
    note(report, section, key, round(statistics.median(runs), 3))


def note_ratios(report: dict[str, Any], sizes: list[int], way: str) -> None:
    """Each way's median over ``way``'s (a direct call), at the same timing (same followers to wait for)."""
    figures = report[report["timing"]]
    for n in sizes:
        direct = figures[f"{n}/{way}"]
        for key, value in list(figures.items()):
            if key.startswith(f"{n}/") and not key.endswith(("_runs", "_post_202", "_seconds")):
                note(report, f"ratio_to_{way}", f"{report['timing']}/{key}", round(value / direct, 2))


async def deletions_directly(
    report: dict[str, Any],
    target: Target,
    sizes: list[int],
    repeat: int,
    steps: dict[int, Iterator[int]],
    phase: Phase,
) -> None:
    """aiokafka and confluent-kafka, and on a real cluster Kafka's Java Admin, run after run."""
    for n in sizes:
        topic, aiokafka_runs, confluent_runs, java_runs = f"bench-{n}", [], [], []
        java = JavaAdmin(target.cluster, topic, n) if target.cluster else None
        try:
            if java:
                await asyncio.to_thread(java.start)  # the JVM's start and warm-up are not timed
            for run in range(repeat):
                align = functools.partial(phase.align, run)
                aiokafka_runs.append(await direct_aiokafka(target, topic, n, next(steps[n]), align))
                confluent_runs.append(await direct_confluent(target, topic, n, next(steps[n]), align))
                if java:
                    await align()
                    java_runs.append(await asyncio.to_thread(java.delete, next(steps[n])))
        finally:
            if java:
                java.close()
        note_runs(report, f"{n}/aiokafka_direct", aiokafka_runs)
        note_runs(report, f"{n}/confluent_kafka_direct", confluent_runs)
        if java:
            note_runs(report, f"{n}/java_admin", java_runs)


async def service_runs(
    report: dict[str, Any],
    target: Target,
    sizes: list[int],
    kind: str,
    work: Path,
    workers: int,
    repeat: int,
    steps: dict[int, Iterator[int]],
    phase: Phase,
    api: bool,
) -> None:
    async with database(kind, work) as url:
        service, base = start_service(url, target, work, workers=workers)
        try:
            runs: dict[int, list[tuple[float, float]]] = {n: [] for n in sizes}
            for index in range(repeat):
                if index:
                    # Each run reads the topic's metadata afresh, as the direct calls do: the service
                    # reuses an answer for up to metadata_max_age_ms (5 s by default).
                    await asyncio.sleep(METADATA_MAX_AGE_S + 0.5)
                align = functools.partial(phase.align, index)
                for n in sizes:
                    deletion = await service_deletion(base, url, f"bench-{n}", n, next(steps[n]), align)
                    runs[n].append(deletion)
            for n in sizes:
                note_runs(report, f"{n}/service_{kind}", [seconds for _, seconds in runs[n]])
                note_runs(report, f"{n}/service_{kind}_post_202", [accepted for accepted, _ in runs[n]])
            if api:
                note(report, "api", f"{kind}_with_executor", await api_throughput(base))
        finally:
            service.stop()
        if not api:
            return
        service, base = start_service(url, target, work, api_only=True, workers=workers)
        try:
            note(report, "api", f"{kind}_api_only", await api_throughput(base))
        finally:
            service.stop()


@asynccontextmanager
async def kafka(
    report: dict[str, Any], options: argparse.Namespace, work: Path, fetch_wait_ms: float
) -> AsyncIterator[Target]:
    """A fresh cluster, emulated or real, with the bench's topics; every deletion moves the log start
    offsets one record further, so each partition holds a record per deletion and one more."""
    sizes: list[int] = options.sizes
    records = options.repeat * (len(options.databases) + (3 if options.kafka == "real" else 2)) + 1
    if options.kafka == "emulator":
        emulator, bootstrap = start_emulator(work, sizes, fetch_wait_ms)
        try:
            for n in sizes:
                await produce(bootstrap, f"bench-{n}", n, records)
            await produce(bootstrap, "api", 16, 1)
            yield emulator_target(bootstrap)
        finally:
            emulator.stop()
        return
    with real_cluster(work, fetch_wait_ms) as target:
        assert target.cluster is not None
        # One partition led by each broker, so the phase's records reach every leader's followers.
        phase = [[1, 2, 3], [2, 3, 1], [3, 1, 2]]
        await asyncio.to_thread(create_topic, target.cluster, PHASE_TOPIC, PHASE_PARTITIONS, 0, phase)
        for n in sizes:
            seconds = await asyncio.to_thread(create_topic, target.cluster, f"bench-{n}", n, records)
            note(report, report["timing"], f"{n}/setup_seconds", round(seconds, 1))
        yield target


async def at_timing(
    report: dict[str, Any], options: argparse.Namespace, fetch_wait_ms: float, api: bool
) -> None:
    """Every way's deletions (and with ``api`` the API figures) on a fresh cluster at one timing."""
    sizes: list[int] = options.sizes
    kinds: list[str] = options.databases
    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"service-bench-{secrets.token_hex(4)}"
    work.mkdir(parents=True)
    report["timing"] = f"fetch_wait_{fetch_wait_ms:g}ms"
    report[report["timing"]] = {}
    async with kafka(report, options, work, fetch_wait_ms) as target:
        # each topic's next offset
        steps: dict[int, Iterator[int]] = {n: itertools.count(1) for n in sizes}
        async with phase_of(target, fetch_wait_ms, options.repeat) as phase:
            await deletions_directly(report, target, sizes, options.repeat, steps, phase)
            for kind in kinds:
                # SQLite has one writer at a time: more processes only wait on each other's locks.
                http_workers = options.workers or (1 if kind == "sqlite" else 2)
                report[f"{kind}_http_workers"] = http_workers
                await service_runs(
                    report, target, sizes, kind, work, http_workers, options.repeat, steps, phase, api
                )
    note_ratios(report, sizes, "aiokafka_direct")
    if target.cluster:
        note_ratios(report, sizes, "java_admin")


async def main(options: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {"api": {}, "ratio_to_aiokafka_direct": {}, "ratio_to_java_admin": {}}
    for index, wait in enumerate(float(w) for w in options.fetch_wait_ms.split(",")):
        await at_timing(report, options, wait, api=index == 0 and options.kafka == "emulator")
    del report["timing"]
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument(
        "--kafka",
        choices=["emulator", "real"],
        default="emulator",
        help="the emulator, or a real Apache Kafka cluster (3 KRaft nodes, SASL/SCRAM) the bench starts",
    )
    parser.add_argument("--databases", help="default: sqlite,postgresql (emulator), postgresql (real)")
    parser.add_argument(
        "--workers", type=int, help="kafka-purge serve --workers (default: 2 on PostgreSQL, 1 on SQLite)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs of each deletion per way (median kept)")
    parser.add_argument(
        "--fetch-wait-ms",
        help="the brokers' replica.fetch.wait.max.ms values, in turn (default: 500,20 emulator, 500 real)",
    )
    options = parser.parse_args()
    real = options.kafka == "real"
    options.sizes = [int(n) for n in options.sizes.split(",")]
    options.databases = (options.databases or ("postgresql" if real else "sqlite,postgresql")).split(",")
    options.fetch_wait_ms = options.fetch_wait_ms or ("500" if real else "500,20")
    try:
        import uvloop  # the load generator's own cost matters on two cores

        loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = uvloop.new_event_loop
    except ImportError:
        loop_factory = None
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        result = runner.run(main(options))
    print(json.dumps(result, indent=2))
