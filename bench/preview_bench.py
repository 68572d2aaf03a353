"""Preview benchmark: POST /v1/deletions with ``dry_run`` over 10,000 partitions and 50 consumer groups.

The emulator runs as its own process (3 brokers, one 10,000-partition topic with 20 records per
partition); 50 groups commit offsets on every partition (positions spread 0-19, so most groups are
behind the cut somewhere). The service runs in this process (ASGI transport, SQLite), so the figure is
the service's own work: metadata, ListOffsets, ListGroups on every broker, one OffsetFetch v8 per
coordinator (all of its groups), DescribeGroups of the affected groups, the impact computation, the
audit event and the JSON response.
Target: under 2 s per preview.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from aiokafka.client import AIOKafkaClient
from aiokafka.protocol.commit import OffsetCommitRequest
from aiokafka.protocol.coordination import FindCoordinatorRequest
from pydantic import SecretStr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from emulator_bench import Connection, cpu_seconds, fill, http, leaders, start_emulator

from app.adapters.db.migrate import upgrade
from app.main import create_app
from app.settings import AuthSettings, ClusterSettings, DatabaseSettings, Settings

PARTITIONS = 10_000
GROUPS = 50
RUNS = 5
CUT = 10
TARGET_S = 2.0


async def commit_groups(bootstrap: str) -> None:
    client = AIOKafkaClient(bootstrap_servers=bootstrap)
    await client.bootstrap()
    try:
        for g in range(GROUPS):
            group = f"group-{g:02d}"
            coordinator = (await client.send(1, FindCoordinatorRequest(group, 0))).coordinator_id
            offsets = [(p, (p + g) % 20, "") for p in range(PARTITIONS)]
            await client.send(coordinator, OffsetCommitRequest(group, -1, "", -1, [("bench", offsets)]))
    finally:
        await client.close()


def settings(directory: str, bootstrap: str) -> Settings:
    return Settings(
        database=DatabaseSettings(url=f"sqlite+aiosqlite:///{directory}/purge.db"),
        clusters={"demo": ClusterSettings(bootstrap_servers=bootstrap, request_timeout_ms=30_000)},
        auth=AuthSettings(dev_issuer=True, dev_clients={"bench": SecretStr("bench-secret")}),
        super_users="User:bench",
    )


class CollectorClock:
    """The time the cyclic garbage collector spends collecting, from its callbacks."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0
        gc.callbacks.append(self._note)

    def _note(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started


async def previews(bootstrap: str, emulator_pid: int) -> list[tuple[float, float, float, float]]:
    with tempfile.TemporaryDirectory() as directory:
        config = settings(directory, bootstrap)
        await upgrade(config.database.url)
        app = create_app(config, run_executor=False)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench", timeout=120) as client:
                grant = await client.post(
                    "/oauth/token", data={"grant_type": "client_credentials"}, auth=("bench", "bench-secret")
                )
                headers = {"Authorization": f"Bearer {grant.json()['access_token']}"}
                body = {
                    "cluster": "demo",
                    "partitions": [{"topic": "bench", "offset": CUT}],
                    "reason": "preview benchmark",
                    "dry_run": True,
                }
                timings = []
                collector = CollectorClock()
                for run in range(RUNS + 1):
                    collected = collector.seconds
                    started, cpu = time.perf_counter(), time.process_time()
                    emulator_cpu = cpu_seconds(emulator_pid)
                    response = await client.post("/v1/deletions", json=body, headers=headers)
                    elapsed = time.perf_counter() - started
                    service_cpu = time.process_time() - cpu
                    emulator_cpu = cpu_seconds(emulator_pid) - emulator_cpu
                    assert response.status_code == 200, response.text[:500]
                    preview = response.json()
                    assert preview["partition_count"] == PARTITIONS
                    assert len(preview["unconsumed_groups"]) == GROUPS
                    if run:  # the first run also connects and warms up
                        timings.append((elapsed, service_cpu, emulator_cpu, collector.seconds - collected))
                return timings


async def main() -> None:
    proc, bootstrap, control = start_emulator(fetch_wait_ms=500)
    try:
        http(
            "POST", f"{control}/topics", {"name": "bench", "partitions": PARTITIONS, "replication_factor": 3}
        )
        by_broker = leaders(control, "bench")
        addresses = dict(enumerate(bootstrap.split(","), start=1))
        connections = {b: await Connection.open(addresses[b]) for b in by_broker}
        await fill(connections, by_broker)
        for connection in connections.values():
            connection.close()
        await commit_groups(bootstrap)
        timings = await previews(bootstrap, proc.pid)
    finally:
        proc.terminate()
        proc.wait()
    walls = [t[0] for t in timings]
    print(f"preview of {PARTITIONS} partitions, {GROUPS} groups, {RUNS} runs:")
    columns = (
        ("wall", walls),
        ("service CPU", [t[1] for t in timings]),
        ("emulator CPU", [t[2] for t in timings]),
        ("service's garbage collections", [t[3] for t in timings]),
    )
    for label, values in columns:
        best, median, worst = min(values), statistics.median(values), max(values)
        print(f"  {label}: best {best:.2f} s  median {median:.2f} s  worst {worst:.2f} s")
    print(f"  target < {TARGET_S} s wall: {'PASS' if statistics.median(walls) < TARGET_S else 'FAIL'}")


if __name__ == "__main__":
    asyncio.run(main())
