"""Brings the demo up in order, prints how to use it, and takes it down again on Ctrl-C."""

from __future__ import annotations

import asyncio
import importlib
import logging
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import httpx
from pydantic import SecretStr

from app.adapters.kafka.group_member import GroupMember
from app.audit.checkpoints import generate_private_key
from app.demo.acls import bearer, create_demo_acls, create_demo_approval_rule
from app.demo.banner import banner
from app.demo.data import produce_demo_records, write_topology
from app.demo.emulator import EmulatorProcess
from app.demo.groups import start_demo_groups
from app.demo.retention import create_demo_retention
from app.settings import AuditSettings, ClusterSettings, DatabaseSettings, Settings

log = logging.getLogger("kafka_purge.demo")
T = TypeVar("T")

DEMO_CLIENTS = {
    "admin": "admin-secret",
    "orders-team": "orders-secret",
    "auditor": "auditor-secret",
    "privacy-officer": "privacy-secret",
}
DEMO_GROUPS = {"orders-team": ["orders"], "auditor": ["auditors"], "privacy-officer": ["privacy-officers"]}


def demo_auth() -> dict[str, Any]:
    """A mapping, not an AuthSettings: the environment's PURGE_AUTH_* settings the demo does not set
    itself still apply (PURGE_AUTH_DEV_ISSUER_ALLOW_REMOTE for a demo reachable from elsewhere)."""
    return {
        "dev_issuer": True,
        "dev_clients": {client: SecretStr(secret) for client, secret in DEMO_CLIENTS.items()},
        "dev_client_groups": DEMO_GROUPS,
    }


def demo_settings(bootstrap: str, database: Path, public_url: str) -> Settings:
    return Settings(
        database=DatabaseSettings(url=f"sqlite+aiosqlite:///{database}"),
        clusters={"demo": ClusterSettings(bootstrap_servers=bootstrap, client_id="kafka-purge-demo")},
        auth=demo_auth(),
        super_users="User:admin",
        public_url=public_url,
        # An ephemeral checkpoint key: the demo's database is fresh each run, and so is its key.
        audit=AuditSettings(signing_key=SecretStr(generate_private_key()), checkpoint_seconds=10),
    )


def fresh_database(data_dir: Path) -> Path:
    """The emulator starts empty every time, so the demo database does too."""
    data_dir.mkdir(parents=True, exist_ok=True)
    database = data_dir / "demo.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    return database.resolve()


async def run_demo(host: str, port: int, data_dir: Path) -> int:
    from app.auth.dev_issuer import check_dev_issuer
    from app.server.serve import bind_socket

    check_dev_issuer(Settings(auth=demo_auth()).auth, host)
    sock = bind_socket(host, port)
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    public_url = f"http://{shown_host}:{sock.getsockname()[1]}"
    database = fresh_database(data_dir)
    emulator = EmulatorProcess(write_topology(data_dir / "demo-topology.yaml"))
    members: list[GroupMember] = []
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        settings = await until_stopped(prepare(emulator, database, public_url, members), stop)
        if settings is None:
            return 130

        async def ready() -> None:
            await set_up_through_api(public_url)
            sys.stdout.write(banner(public_url, emulator, DEMO_CLIENTS, str(database)))
            sys.stdout.flush()

        await serve(settings, sock, stop, ready)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await asyncio.gather(*(member.stop() for member in members), return_exceptions=True)
        await emulator.stop()
    return 0


async def prepare(
    emulator: EmulatorProcess, database: Path, public_url: str, members: list[GroupMember]
) -> Settings:
    """Starts the cluster, then writes its records and commits the groups' positions (a joined live
    member is added to ``members``) side by side, and migrates the database."""
    from app.adapters.db.migrate import upgrade

    # The service's modules take seconds to import: a thread imports them while the emulator (its own
    # process) starts and the data is written. The migrations wait for it, since they import the models
    # too (two threads importing the same modules can each get the other's half-imported one).
    importing = asyncio.create_task(asyncio.to_thread(importlib.import_module, "app.main"))
    await emulator.start()
    settings = demo_settings(emulator.bootstrap, database, public_url)

    async def groups() -> None:
        # The demo's own consumers joining their groups: a dozen lines that say nothing to an operator.
        logging.getLogger("aiokafka.consumer").setLevel(max(logging.WARNING, logging.getLogger().level))
        members.extend(await start_demo_groups(emulator.bootstrap))

    # A task group, not gather: cancelled by Ctrl-C, gather ends as soon as its first child is cancelled
    # and leaves the producer flushing to an emulator that is then stopped under it; a group waits for
    # every child.
    async with asyncio.TaskGroup() as group:
        producing = group.create_task(produce_demo_records(emulator.bootstrap))
        group.create_task(groups())
    await importing
    count = producing.result()
    await upgrade(settings.database.url)
    log.info("demo data: %d records in the emulated cluster at %s", count, emulator.bootstrap)
    log.info(
        "the emulated brokers serve DeleteRecords v3 (the LeaderOnly KIP draft) for leader_only deletions; "
        "Apache Kafka (up to 4.4) serves v0-2"
    )
    return settings


async def set_up_through_api(public_url: str) -> None:
    """What the demo's users create through the API: ACLs and the approval rule (as admin), then the Spark
    consumer and the
    retention policy (as orders-team, who then owns the policy)."""
    async with httpx.AsyncClient(base_url=public_url, timeout=10) as client:
        admin = await bearer(client, ("admin", DEMO_CLIENTS["admin"]))
        await create_demo_acls(client, admin)
        await create_demo_approval_rule(client, admin)
        orders_team = await bearer(client, ("orders-team", DEMO_CLIENTS["orders-team"]))
        await create_demo_retention(client, orders_team)


async def until_stopped(work: Coroutine[Any, Any, T], stop: asyncio.Event) -> T | None:
    """``work``'s result, or None once ``stop`` is set first (``work`` is then cancelled and awaited)."""
    task = asyncio.create_task(work)
    stopper = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        # Also when the caller is cancelled (a Ctrl-C before the demo's own handlers were in place).
        stopper.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if not stop.is_set():
        return task.result()
    return None


async def serve(
    settings: Settings, sock: socket.socket, stop: asyncio.Event, on_ready: Callable[[], Awaitable[None]]
) -> None:
    """Runs uvicorn until it stops, calling ``on_ready`` once it answers. While uvicorn runs it handles
    SIGINT itself; ``stop`` covers the moments before its handlers are in place."""
    from app.server.serve import make_server

    server = make_server(settings)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        # uvicorn exposes readiness only as a flag.
        while not server.started and not serving.done() and not stop.is_set():  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        if server.started and not stop.is_set():
            try:
                await on_ready()
            except Exception:
                # Ctrl-C reached uvicorn while the demo was still setting up over HTTP: stopping wins.
                if not (server.should_exit or stop.is_set()):
                    raise
        stopper = asyncio.create_task(stop.wait())
        await asyncio.wait({serving, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
    finally:
        server.should_exit = True
        await serving
