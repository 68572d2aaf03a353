"""``scripts/postgres``, which ``make test`` runs before the tests: with the server up (as it is for the
test session), another run installs, restarts and reloads nothing, and both roles the tests may log in
as get in over TCP without a password."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

import asyncpg

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "postgres"


async def server_times(user: str) -> tuple[datetime, datetime]:
    """When the server started, and when it last read its configuration (a reload changes it)."""
    connection = await asyncpg.connect(f"postgresql://{user}@127.0.0.1:5432/postgres")
    try:
        row = await connection.fetchrow("SELECT pg_postmaster_start_time(), pg_conf_load_time()")
    finally:
        await connection.close()
    assert row is not None
    return row[0], row[1]


async def test_a_second_run_leaves_the_running_server_alone() -> None:
    before = await server_times("postgres")
    run = await asyncio.create_subprocess_exec(
        str(SCRIPT), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    stdout, stderr = await asyncio.wait_for(run.communicate(), timeout=60)
    assert run.returncode == 0, stderr.decode()
    assert "already running" in stdout.decode(), stdout.decode()
    assert stderr == b""
    assert await server_times("root") == before
