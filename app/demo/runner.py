"""Brings the demo up in order, prints how to use it, and takes it down again on Ctrl-C."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

from pydantic import SecretStr

from app.demo.banner import banner
from app.demo.data import produce_demo_records, write_topology
from app.demo.emulator import EmulatorProcess
from app.settings import AuthSettings, ClusterSettings, DatabaseSettings, Settings

log = logging.getLogger("kafka_purge.demo")

DEMO_CLIENTS = {"admin": "admin-secret", "orders-team": "orders-secret", "auditor": "auditor-secret"}
DEMO_GROUPS = {"orders-team": ["orders"], "auditor": ["auditors"]}


def demo_settings(bootstrap: str, database: Path, public_url: str) -> Settings:
    return Settings(
        database=DatabaseSettings(url=f"sqlite+aiosqlite:///{database}"),
        clusters={"demo": ClusterSettings(bootstrap_servers=bootstrap, client_id="kafka-purge-demo")},
        auth=AuthSettings(
            dev_issuer=True,
            dev_clients={client: SecretStr(secret) for client, secret in DEMO_CLIENTS.items()},
            dev_client_groups=DEMO_GROUPS,
        ),
        super_users="User:admin",
        public_url=public_url,
    )


def fresh_database(data_dir: Path) -> Path:
    """The emulator starts empty every time, so the demo database does too."""
    data_dir.mkdir(parents=True, exist_ok=True)
    database = data_dir / "demo.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    return database.resolve()


async def run_demo(host: str, port: int, data_dir: Path) -> int:
    from app.adapters.db.migrate import upgrade
    from app.cli import benign_signals, bind_socket, make_server

    sock = bind_socket(host, port)
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    public_url = f"http://{shown_host}:{sock.getsockname()[1]}"
    database = fresh_database(data_dir)
    emulator = EmulatorProcess(write_topology(data_dir / "demo-topology.yaml"))
    with benign_signals():
        try:
            await emulator.start()
            count = await produce_demo_records(emulator.bootstrap)
            log.info("demo data: %d records in the emulated cluster at %s", count, emulator.bootstrap)
            settings = demo_settings(emulator.bootstrap, database, public_url)
            await upgrade(settings.database.url)
            server = make_server(settings)
            serving = asyncio.create_task(server.serve(sockets=[sock]))
            # uvicorn exposes readiness only as a flag.
            while not server.started and not serving.done():  # noqa: ASYNC110
                await asyncio.sleep(0.05)
            if server.started:
                sys.stdout.write(banner(public_url, emulator, DEMO_CLIENTS))
                sys.stdout.flush()
            await serving
        finally:
            await emulator.stop()
    return 0
