"""Liveness, readiness and Prometheus metrics (unauthenticated, for orchestrators and scrapers)."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.api.routing import DatabaseRoute, RuntimeDep
from app.schemas.health import Health, Readiness
from app.services import health
from app.services.backlog import refresh_backlog

router = APIRouter(tags=["health"], route_class=DatabaseRoute)


@router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """The process is up and serving requests."""
    return Health(status="ok")


@router.get(
    "/readyz", response_model=Readiness, responses={503: {"model": Readiness, "description": "Not ready"}}
)
async def readyz(runtime: RuntimeDep, response: Response) -> Readiness:
    """Ready when the database answers and the executor runs (unless disabled); reports each cluster."""
    readiness = await health.readiness(runtime)
    response.status_code = 200 if readiness.status == "ready" else 503
    return readiness


@router.get("/metrics", response_class=Response, responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}})
async def metrics(runtime: RuntimeDep) -> Response:
    """Prometheus metrics of this process (API and executor) and the backlog in the database."""
    await refresh_backlog(runtime)
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
