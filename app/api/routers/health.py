"""Liveness, readiness and Prometheus metrics (unauthenticated, for orchestrators and scrapers)."""

from __future__ import annotations

import asyncio
from typing import Literal

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel
from sqlalchemy import text

from app.adapters.db.session import read_session
from app.api.deps import RuntimeDep
from app.services.runtime import Runtime

router = APIRouter(tags=["health"])
CHECK_TIMEOUT_SECONDS = 2.0


class Health(BaseModel):
    status: Literal["ok"]


class Readiness(BaseModel):
    status: Literal["ready", "not_ready"]
    database: Literal["ok", "unreachable"]
    executor: Literal["running", "stopped", "disabled"]
    clusters: dict[str, Literal["reachable", "unreachable"]]


@router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """The process is up and serving requests."""
    return Health(status="ok")


async def _database_ok(runtime: Runtime) -> bool:
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_SECONDS), read_session(runtime.sessionmaker) as session:
            await session.execute(text("SELECT 1"))
    except Exception:
        return False
    return True


async def _cluster_reachable(runtime: Runtime, name: str) -> bool:
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
            return await runtime.gateway.ping(name)
    except Exception:
        return False


@router.get(
    "/readyz", response_model=Readiness, responses={503: {"model": Readiness, "description": "Not ready"}}
)
async def readyz(runtime: RuntimeDep, response: Response) -> Readiness:
    """Ready when the database answers and the executor runs (unless disabled); reports each cluster."""
    names = sorted(runtime.settings.clusters)
    database, *reachable = await asyncio.gather(
        _database_ok(runtime), *(_cluster_reachable(runtime, name) for name in names)
    )
    executor: Literal["running", "stopped", "disabled"] = "disabled"
    if runtime.executor is not None:
        executor = "running" if runtime.executor.running else "stopped"
    ready = database and executor != "stopped"
    response.status_code = 200 if ready else 503
    return Readiness(
        status="ready" if ready else "not_ready",
        database="ok" if database else "unreachable",
        executor=executor,
        clusters={n: "reachable" if ok else "unreachable" for n, ok in zip(names, reachable, strict=True)},
    )


@router.get("/metrics", response_class=Response, responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})
async def metrics() -> Response:
    """Prometheus metrics of this process (API and executor)."""
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
