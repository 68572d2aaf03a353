"""Consumed-data retention figures.

1. Planning: ``plan_sweep`` over 10,000 partitions x 100 groups (named groups, and ``all_groups`` with the
   same groups), pure Python, no I/O.
2. A whole sweep against the emulated cluster (its own process, 3 brokers): one 10,000-partition topic,
   100 groups with a commit on every partition; list topics, metadata, log start offsets and high
   watermarks, OffsetFetch of 10,000 partitions per group, plan. Wall time, and the service's own CPU
   time (this process), since the emulator's OffsetFetch handling dominates the wall time.
3. Progress report -> deletion latency: the service (scheduler and executor running, policy interval 1 s)
   receives a Spark consumer's progress report (the listener's PUT); timed until the partition's log start
   offset on the leader reached the reported offset.

4. With ``--scale N``: planning over N partitions x ``--groups`` groups, and a whole sweep of N
   partitions on PostgreSQL (several deletions) against the direct DeleteRecords (``retention_scale``).

Run: ``.venv/bin/python bench/retention_bench.py [--partitions 10000] [--groups 100] [--reports 10]``,
or ``PYTHONPATH=. .venv/bin/python bench/retention_bench.py --scale 100000 --groups 200``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr

from app.adapters.db.retention_models import RetentionPolicy
from app.domain.ports import TopicPartition
from app.domain.positions import Positions
from app.domain.retention import (
    ClusterView,
    ConsumerSelection,
    PartitionOffsets,
    RetentionRules,
    plan_sweep,
)
from app.domain.topic_patterns import TopicSelector
from app.main import create_app
from app.services.retention.sweep import sweep
from app.settings import AuthSettings, ClusterSettings, DatabaseSettings, Settings, WorkerSettings
from kafka_emulator import EmulatedCluster


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def _positions(rng: random.Random, partitions: int) -> Positions:
    positions = Positions()
    for first in range(0, partitions, 100):
        count = min(100, partitions - first)
        offsets = [rng.randint(100, 10_000) for _ in range(count)]
        positions.put(f"inter.t{first // 100}", range(count), offsets)
    return positions


def planning(partitions: int, groups: int, runs: int = 5) -> None:
    rng = random.Random(1)
    tps = [TopicPartition(f"inter.t{p // 100}", p % 100) for p in range(partitions)]
    offsets = {tp: PartitionOffsets(rng.randint(0, 100), 10_000) for tp in tps}
    names = [f"g{g}" for g in range(groups)]
    # As the OffsetFetch answers arrive: per topic, the offsets in partition order.
    commits = {g: _positions(rng, partitions) for g in names}
    view = ClusterView(partitions=offsets, group_offsets=commits)
    for label, consumers in (
        ("named groups", ConsumerSelection(groups=tuple(names))),
        ("all_groups", ConsumerSelection(all_groups=True)),
    ):
        rules = RetentionRules(TopicSelector(prefix="inter."), consumers)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            plan = plan_sweep(rules, view)
            times.append(time.perf_counter() - started)
        assert len(plan.deletions) + len(plan.skipped) == partitions
        print(
            f"plan {partitions} partitions x {groups} groups ({label}): "
            f"median {statistics.median(times) * 1000:.0f} ms, best {min(times) * 1000:.0f} ms ({load()})"
        )


def settings_for(bootstrap: str, folder: Path) -> Settings:
    return Settings(
        database=DatabaseSettings(url=f"sqlite+aiosqlite:///{folder / 'purge.db'}"),
        clusters={"demo": ClusterSettings(bootstrap_servers=bootstrap, request_timeout_ms=120_000)},
        auth=AuthSettings(dev_issuer=True, dev_clients={"etl": SecretStr("etl-secret")}),
        worker=WorkerSettings(poll_interval_seconds=0.05, confirm_interval_ms=50),
        super_users="User:etl",
    )


def start_emulator(partitions: int) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    command = [sys.executable, "-m", "kafka_emulator", "--brokers", "3"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    ready = json.loads(proc.stdout.readline())
    body = json.dumps({"name": "inter.bench", "partitions": partitions}).encode()
    request = urllib.request.Request(f"{ready['control']}/topics", data=body, method="POST")
    urllib.request.urlopen(request).read()
    return proc, str(ready["bootstrap"])


def commit_all(bootstrap: str, group: str, partitions: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka import KafkaConsumer
        from kafka import TopicPartition as KafkaTopicPartition
        from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        consumer.commit(
            {KafkaTopicPartition("inter.bench", p): OffsetAndMetadata(0, "", -1) for p in range(partitions)}
        )
    finally:
        consumer.close()


def bench_policy(groups: int) -> RetentionPolicy:
    return RetentionPolicy(
        id="bench",
        cluster="demo",
        name="bench",
        topics={"prefix": "inter."},
        consumers={"groups": [f"g{g}" for g in range(groups)], "spark": []},
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


async def whole_sweep(partitions: int, groups: int, runs: int) -> None:
    proc, bootstrap = start_emulator(partitions)
    try:
        # High watermarks are 0: every group commits 0 everywhere, so every partition has a position and
        # the sweep reads and plans everything (and finds nothing to delete).
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda g: commit_all(bootstrap, f"g{g}", partitions), range(groups)))
        with tempfile.TemporaryDirectory() as folder:
            app = create_app(settings_for(bootstrap, Path(folder)), run_executor=False, run_migrations=True)
            async with app.router.lifespan_context(app):
                walls, cpus = [], []
                for _ in range(runs):
                    started, cpu = time.perf_counter(), time.process_time()
                    result = await sweep(app.state.runtime, bench_policy(groups))
                    walls.append(time.perf_counter() - started)
                    cpus.append(time.process_time() - cpu)
                assert result.matched == partitions, result.error
    finally:
        proc.terminate()
        proc.wait()
    print(
        f"whole sweep, {partitions} partitions x {groups} groups against the emulator process: wall median "
        f"{statistics.median(walls):.2f} s (best {min(walls):.2f}), service CPU median "
        f"{statistics.median(cpus):.2f} s ({result.status}, {load()})"
    )


async def poll(check: Callable[[], Awaitable[bool]], within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            raise TimeoutError("not reached")
        await asyncio.sleep(0.01)


async def latency(reports: int) -> None:
    async with EmulatedCluster(brokers=3) as cluster:
        cluster.create_topic("inter.lat", 1)
        with tempfile.TemporaryDirectory() as folder:
            app = create_app(settings_for(cluster.bootstrap, Path(folder)), run_migrations=True)
            async with app.router.lifespan_context(app):
                await measure_latency(app, cluster, reports)


async def measure_latency(app: Any, cluster: EmulatedCluster, reports: int) -> None:
    from aiokafka import AIOKafkaProducer

    services = app.state.runtime
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        token = await client.post(
            "/oauth/token", data={"grant_type": "client_credentials"}, auth=("etl", "etl-secret")
        )
        headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
        policy = {
            "name": "lat",
            "topics": {"names": ["inter.lat"]},
            "consumers": {"spark": ["job"]},
            "interval_seconds": 1,
        }
        assert (
            await client.post("/v1/clusters/demo/policies", json=policy, headers=headers)
        ).status_code == 201
        producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all")
        await producer.start()
        tp, samples = TopicPartition("inter.lat", 0), []
        try:
            for batch in range(1, reports + 1):
                for _ in range(10):
                    await producer.send("inter.lat", b"x", partition=0)
                await producer.flush()
                await asyncio.sleep(random.uniform(0, 1))  # reports arrive at any point of the sweep cycle
                body = {
                    "query_id": "q",
                    "run_id": "r",
                    "batch_id": batch,
                    "offsets": {"inter.lat": {"0": batch * 10}},
                }
                reported = time.perf_counter()
                response = await client.put(
                    "/v1/clusters/demo/consumers/job/progress", json=body, headers=headers
                )
                assert response.status_code == 200, response.text

                async def deleted(target: int = batch * 10) -> bool:
                    return (await services.gateway.log_start_offsets("demo", [tp]))[tp] >= target

                await poll(deleted)
                samples.append(time.perf_counter() - reported)
        finally:
            await producer.stop()
    samples.sort()
    print(
        f"progress report -> records deleted (policy interval 1 s), {reports} reports: "
        f"median {statistics.median(samples) * 1000:.0f} ms, "
        f"p90 {samples[max(int(len(samples) * 0.9) - 1, 0)] * 1000:.0f} ms, "
        f"max {samples[-1] * 1000:.0f} ms ({load()})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--reports", type=int, default=10)
    parser.add_argument("--sweeps", type=int, default=3)
    parser.add_argument("--scale", type=int, default=0, help="partitions of the scaled sweep (PostgreSQL)")
    args = parser.parse_args()
    if args.scale:
        from retention_scale import scaled_sweep

        planning(args.scale, args.groups, runs=3)
        print(asyncio.run(scaled_sweep(args.scale)))
        return
    planning(args.partitions, args.groups)
    asyncio.run(whole_sweep(args.partitions, args.groups, args.sweeps))
    asyncio.run(latency(args.reports))


if __name__ == "__main__":
    main()
