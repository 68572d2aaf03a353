"""Readiness: the database answers, the executor runs (unless disabled), and each cluster is reachable."""

from __future__ import annotations

import asyncio
from typing import Literal

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.adapters.db.session import run_read
from app.schemas.health import Readiness
from app.services.runtime import Runtime

CHECK_TIMEOUT_SECONDS = 2.0


def _select_one(session: Session) -> None:
    session.execute(text("SELECT 1"))


async def _database_ok(runtime: Runtime) -> bool:
    """Whether the database answers; a connection lost an instant ago is replaced first (``run_read``)."""
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
            await run_read(runtime.sessionmaker, _select_one)
    except Exception:
        return False
    return True


async def _cluster_reachable(runtime: Runtime, name: str) -> bool:
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
            return await runtime.gateway.ping(name)
    except Exception:
        return False


async def readiness(runtime: Runtime) -> Readiness:
    """Ready when the database answers and the executor runs (unless disabled); reports each cluster."""
    names = sorted(runtime.settings.clusters)
    database, *reachable = await asyncio.gather(
        _database_ok(runtime), *(_cluster_reachable(runtime, name) for name in names)
    )
    executor: Literal["running", "stopped", "disabled"] = "disabled"
    if runtime.executor is not None:
        executor = "running" if runtime.executor.running else "stopped"
    ready = database and executor != "stopped"
    return Readiness(
        status="ready" if ready else "not_ready",
        database="ok" if database else "unreachable",
        executor=executor,
        clusters={n: "reachable" if ok else "unreachable" for n, ok in zip(names, reachable, strict=True)},
    )
