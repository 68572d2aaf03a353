"""A retention sweep at scale against the same deletion done directly (``retention_bench.py --scale``).

The emulator runs as its own process (3 brokers) with one topic of ``partitions`` partitions and two
records on each. First the direct way: one DeleteRecords per leader to offset 1 (aiokafka, metadata read
afresh, as a client would). Then the service on PostgreSQL, its executor running: a group has committed
offset 2 everywhere, and one sweep of a policy naming that group reads the cluster, plans, submits the
plan as deletions of at most ``PURGE_LIMITS_MAX_PARTITIONS`` (10,000) partitions each, and the executor
sends them; timed until every partition of every deletion is terminal.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg
from aiokafka.client import AIOKafkaClient
from aiokafka.protocol.admin import DeleteRecordsRequest
from aiokafka.structs import TopicPartition as AioTopicPartition
from pydantic import SecretStr
from sqlalchemy import func, select

from app.adapters.db.models import PartitionDeletion
from app.adapters.db.retention_models import RetentionPolicy
from app.domain.deletion_requests import TERMINAL_PARTITION_STATUSES
from app.main import create_app
from app.services.retention.sweep import sweep
from app.settings import AuthSettings, ClusterSettings, DatabaseSettings, Settings, WorkerSettings

TOPIC = "inter.scale"
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


def start_emulator(partitions: int) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    command = [sys.executable, "-m", "kafka_emulator", "--brokers", "3", "--request-log-max", "1"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    ready = json.loads(proc.stdout.readline())
    body = json.dumps({"name": TOPIC, "partitions": partitions}).encode()
    request = urllib.request.Request(f"{ready['control']}/topics", data=body, method="POST")
    urllib.request.urlopen(request).read()
    return proc, str(ready["bootstrap"])


def produce(bootstrap: str, partitions: int, records: int) -> None:
    """``records`` records on every partition, with librdkafka (aiokafka's producer looks up the topic's
    partition set on every send, which is quadratic over 100,000 partitions)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "acks": 1})
    for _ in range(records):
        for p in range(partitions):
            while True:
                try:
                    producer.produce(TOPIC, b"x", partition=p)
                    break
                except BufferError:
                    producer.poll(0.1)
    assert producer.flush(600) == 0


def commit_all(bootstrap: str, group: str, partitions: int, offset: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka import KafkaConsumer
        from kafka import TopicPartition as KafkaTopicPartition
        from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        consumer.commit(
            {KafkaTopicPartition(TOPIC, p): OffsetAndMetadata(offset, "", -1) for p in range(partitions)}
        )
    finally:
        consumer.close()


async def direct(bootstrap: str, partitions: int, offset: int) -> float:
    """One DeleteRecords per leader, as Kafka's Admin client sends them; the seconds it took."""
    client = AIOKafkaClient(bootstrap_servers=bootstrap, request_timeout_ms=300_000)
    await client.bootstrap()
    try:
        started = time.perf_counter()
        client.add_topic(TOPIC)
        await client.force_metadata_update()
        by_leader: dict[int, list[tuple[int, int]]] = {}
        for p in range(partitions):
            leader = client.cluster.leader_for_partition(AioTopicPartition(TOPIC, p))
            by_leader.setdefault(leader, []).append((p, offset))
        requests = [
            client.send(leader, DeleteRecordsRequest([(TOPIC, parts)], 120_000))
            for leader, parts in by_leader.items()
        ]
        responses = await asyncio.gather(*requests)
        elapsed = time.perf_counter() - started
    finally:
        await client.close()
    errors = [p for r in responses for t in r.topics for p in t[1] if p[2] != 0]
    assert not errors, errors[:5]
    return elapsed


@asynccontextmanager
async def postgresql() -> AsyncIterator[str]:
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


def scale_policy() -> RetentionPolicy:
    return RetentionPolicy(
        id="scale",
        cluster="demo",
        name="scale",
        topics={"names": [TOPIC]},
        consumers={"groups": ["sink"], "spark": []},
        min_age_seconds=0,
        min_records=1,
        interval_seconds=60,
        leader_only=False,
        enabled=True,
        skip_foreign_active_groups=False,
        await_previous_deletion=False,
        owner="User:etl",
        owner_groups=[],
        owner_host="127.0.0.1",
    )


async def unfinished(app: object, deletion_ids: list[str]) -> int:
    terminal = [status.value for status in TERMINAL_PARTITION_STATUSES]
    query = select(func.count()).where(
        PartitionDeletion.deletion_id.in_(deletion_ids), PartitionDeletion.status.not_in(terminal)
    )
    async with app.state.runtime.sessionmaker() as session:  # type: ignore[attr-defined]
        return int((await session.execute(query)).scalar_one())


async def swept(url: str, bootstrap: str) -> tuple[float, float, int, str]:
    """Sweep start to every partition terminal; also the sweep alone (plan and submission)."""
    settings = Settings(
        database=DatabaseSettings(url=url, pool_size=5),
        clusters={"demo": ClusterSettings(bootstrap_servers=bootstrap, request_timeout_ms=300_000)},
        auth=AuthSettings(dev_issuer=True, dev_clients={"etl": SecretStr("etl-secret")}),
        worker=WorkerSettings(poll_interval_seconds=0.05, confirm_interval_ms=50),
        super_users="User:etl",
    )
    app = create_app(settings, run_executor=True, run_migrations=True)
    async with app.router.lifespan_context(app):
        started = time.perf_counter()
        result = await sweep(app.state.runtime, scale_policy())
        submitted = time.perf_counter() - started
        assert result.status == "submitted", result.error
        while True:
            if not await unfinished(app, result.deletion_ids):
                break
            await asyncio.sleep(0.05)
        return time.perf_counter() - started, submitted, len(result.deletion_ids), result.status


async def scaled_sweep(partitions: int) -> str:
    proc, bootstrap = start_emulator(partitions)
    try:
        await asyncio.to_thread(produce, bootstrap, partitions, 2)
        await asyncio.to_thread(commit_all, bootstrap, "sink", partitions, 2)
        direct_seconds = await direct(bootstrap, partitions, 1)
        async with postgresql() as url:
            total, submitted, deletions, _ = await swept(url, bootstrap)
    finally:
        proc.terminate()
        proc.wait()
    return (
        f"sweep of {partitions} partitions (PostgreSQL, {deletions} deletions): {total:.2f} s to all "
        f"terminal ({submitted:.2f} s to submit), direct DeleteRecords {direct_seconds:.2f} s, "
        f"ratio {total / direct_seconds:.2f}"
    )
