"""The length of the path the product exists for: which app modules one ``POST /v1/deletions`` runs, the
module-to-module hops between them, and the database transactions it opens.

    .venv/bin/python bench/request_trace.py [--partitions 3] [--database sqlite|postgresql] [--modules]

In one process: a 3-broker emulated cluster (``kafka_emulator``) with a topic of ``--partitions``
partitions holding records, the app with its executor on a freshly migrated database, and one deletion
(an offset on every partition) POSTed through httpx's ASGI transport, then followed until its row says
``succeeded`` (read with the database's own driver, so the following runs no app code). A profile hook
(``sys.setprofile``) notes every function call whose code lives in ``app``:

- ``to_commit``: from the POST until its 202 answer (the request is stored);
- ``to_outcome``: from the 202 until the stored outcome;
- ``main_path``: both together.

Calls made by the periodic loops (retention scheduler, audit checkpointer, webhook dispatcher, approval
expiry) and their tasks are left out: they run beside the request, not for it. Transactions are the
``begin`` events of SQLAlchemy's engines in each window; up to the commit, only those of the request's
own task and of the group commit that stores it (the executor's loop polls beside them). The executor
polls every 5 s: the instance that stores a deletion hands its rows to its own executor at once, so the
outcome's window holds that work, not idle polls. Prints a JSON report; ``--modules`` adds the module
names.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import asyncpg
import httpx
from aiokafka import AIOKafkaProducer
from pydantic import SecretStr
from sqlalchemy import event
from sqlalchemy.engine import Engine

from app.adapters.db.migrate import upgrade
from app.main import create_app
from app.settings import AuthSettings, ClusterSettings, DatabaseSettings, Settings, WorkerSettings
from kafka_emulator import EmulatedCluster

PG_ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
SECRET = "trace-secret"
# Tasks that run beside a request rather than for it (``app.worker.periodic.Periodic`` and its children).
REQUEST_TASK = "traced request"
BESIDE = ("Periodic._run", "WebhookDispatcher", "lease of policy", "webhook delivery", "approval expiry")


class Trace:
    """App modules called, and caller -> callee module pairs, per window."""

    def __init__(self) -> None:
        self.window: str | None = None
        self.modules: dict[str, set[str]] = defaultdict(set)
        self.hops: dict[str, set[tuple[str, str]]] = defaultdict(set)
        self.transactions: dict[str, int] = defaultdict(int)

    def profile(self, frame: FrameType, what: str, arg: Any) -> None:
        if what != "call" or self.window is None:
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("app.") or _beside():
            return
        self.modules[self.window].add(module)
        caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
        if caller.startswith("app.") and caller != module:
            self.hops[self.window].add((caller, module))

    def began(self, *_: Any) -> None:
        if self.window is None or _beside():
            return
        if self.window == "to_commit" and not _for_the_request():
            return
        self.transactions[self.window] += 1


def _for_the_request() -> bool:
    """Whether the running task is the request's own (httpx's ASGI transport runs the app in the caller's
    task) or the group commit that stores it, not the executor's loop polling beside it."""
    task = asyncio.current_task()
    return task is not None and (task.get_name() == REQUEST_TASK or task.get_name() == "accept batcher")


def _beside() -> bool:
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return False
    if task is None:
        return False
    described = f"{task.get_name()} {getattr(task.get_coro(), '__qualname__', '')}"
    return any(name in described for name in BESIDE)


@asynccontextmanager
async def database(kind: str, folder: Path) -> AsyncIterator[tuple[str, Any]]:
    """(the app's URL, a function returning the deletion's status with the database's own driver); a
    PostgreSQL database is dropped afterwards."""
    if kind == "sqlite":
        path = folder / "trace.db"
        url = f"sqlite+aiosqlite:///{path}"
        await upgrade(url)

        async def sqlite_status(deletion_id: str) -> str:
            with sqlite3.connect(path) as connection:
                row = connection.execute(
                    "SELECT status FROM deletion WHERE id = ?", (deletion_id,)
                ).fetchone()
            return str(row[0]) if row else ""

        yield url, sqlite_status
        return
    name = f"purge_trace_{int(time.time())}"
    admin = await asyncpg.connect(PG_ADMIN_DSN)
    await admin.execute(f'CREATE DATABASE "{name}"')
    await admin.close()
    url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    await upgrade(url)

    async def postgresql_status(deletion_id: str) -> str:
        connection = await asyncpg.connect(url.replace("+asyncpg", ""))
        try:
            value = await connection.fetchval("SELECT status FROM deletion WHERE id::text = $1", deletion_id)
        finally:
            await connection.close()
        return str(value or "")

    try:
        yield url, postgresql_status
    finally:
        admin = await asyncpg.connect(PG_ADMIN_DSN)
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def trace(partitions: int, kind: str) -> Trace:
    cluster = EmulatedCluster(brokers=3)
    await cluster.start()
    cluster.create_topic("orders", partitions=partitions, replication_factor=3)
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all")
    await producer.start()
    for partition in range(partitions):
        for index in range(10):
            await producer.send_and_wait("orders", f"record {index}".encode(), partition=partition)
    await producer.stop()
    folder = Path(tempfile.mkdtemp(prefix="kafka-purge-trace-"))
    async with database(kind, folder) as (url, status):
        return await follow(cluster, url, status, partitions)


async def follow(cluster: EmulatedCluster, url: str, status: Any, partitions: int) -> Trace:
    """The app on ``url``, one deletion POSTed and followed to its stored outcome, traced."""
    settings = Settings(
        database=DatabaseSettings(url=url),
        clusters={"demo": ClusterSettings(bootstrap_servers=cluster.bootstrap)},
        auth=AuthSettings(dev_issuer=True, dev_clients={"tracer": SecretStr(SECRET)}),
        worker=WorkerSettings(poll_interval_seconds=5),
        super_users="User:tracer",
    )
    app = create_app(settings, run_executor=True)
    recorded = Trace()
    event.listen(Engine, "begin", recorded.began)
    body = {
        "cluster": "demo",
        "reason": "trace of one deletion",
        "partitions": [{"topic": "orders", "partition": p, "offset": 5} for p in range(partitions)],
    }
    try:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
            async with httpx.AsyncClient(transport=transport, base_url="http://trace") as client:
                answer = await client.post(
                    "/oauth/token", data={"grant_type": "client_credentials"}, auth=("tracer", SECRET)
                )
                headers = {"Authorization": f"Bearer {answer.json()['access_token']}"}
                warm = await client.post("/v1/deletions", json={**body, "dry_run": True}, headers=headers)
                assert warm.status_code == 200, warm.text
                sys.setprofile(recorded.profile)
                recorded.window = "to_commit"
                posted = await client.post("/v1/deletions", json=body, headers=headers)
                recorded.window = "to_outcome"
                assert posted.status_code == 202, posted.text
                deadline = time.monotonic() + 30
                while await status(posted.json()["id"]) != "succeeded":
                    assert time.monotonic() < deadline, "the deletion did not succeed within 30 s"
                    await asyncio.sleep(0.005)
                recorded.window = None
                sys.setprofile(None)
    finally:
        event.remove(Engine, "begin", recorded.began)
        await cluster.stop()
    return recorded


def report(recorded: Trace, partitions: int, kind: str, names: bool) -> dict[str, Any]:
    windows: dict[str, Any] = {}
    for window in ("to_commit", "to_outcome"):
        windows[window] = {
            "modules": len(recorded.modules[window]),
            "hops": len(recorded.hops[window]),
            "transactions": recorded.transactions[window],
        }
    main_path = recorded.modules["to_commit"] | recorded.modules["to_outcome"]
    hops = recorded.hops["to_commit"] | recorded.hops["to_outcome"]
    windows["main_path"] = {"modules": len(main_path), "hops": len(hops)}
    result: dict[str, Any] = {"partitions": partitions, "database": kind, **windows}
    if names:
        result["module_names"] = sorted(main_path)
    return result


async def _named(work: Any) -> Trace:
    asyncio.current_task().set_name(REQUEST_TASK)  # type: ignore[union-attr]
    result: Trace = await work
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--modules", action="store_true", help="list the main path's modules")
    args = parser.parse_args()
    recorded = asyncio.run(_named(trace(args.partitions, args.database)))
    print(json.dumps(report(recorded, args.partitions, args.database, args.modules), indent=2))


if __name__ == "__main__":
    main()
