"""Liveness, readiness (database, executor, clusters) and Prometheus metrics."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from helpers.api import deletion_body

from app.main import create_app
from app.settings import ClusterSettings, DatabaseSettings, Settings


@asynccontextmanager
async def _client(settings: Settings, *, run_executor: bool) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings, run_executor=run_executor)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_ready_with_executor_and_reachable_cluster(
    app_client: httpx.AsyncClient, emulator: Any
) -> None:
    assert (await app_client.get("/healthz")).json() == {"status": "ok"}
    response = await app_client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ready", "database": "ok", "executor": "running", "clusters": {"demo": "reachable"},
    }  # fmt: skip


async def test_unreachable_cluster_is_reported_but_not_fatal(settings: Settings) -> None:
    down = ClusterSettings(bootstrap_servers=f"127.0.0.1:{_closed_port()}", request_timeout_ms=1_000)
    async with _client(
        settings.model_copy(update={"clusters": {"down": down}}), run_executor=False
    ) as client:
        response = await client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["clusters"] == {"down": "unreachable"}
    assert response.json()["executor"] == "disabled"


async def test_unreachable_database_is_503(settings: Settings) -> None:
    database = DatabaseSettings(url=f"postgresql+asyncpg://postgres@127.0.0.1:{_closed_port()}/none")
    async with _client(settings.model_copy(update={"database": database}), run_executor=False) as client:
        response = await client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["database"] == "unreachable"


async def test_metrics_count_requests_by_route_and_accepted_deletions(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str
) -> None:
    await app_client.post("/v1/deletions", json=deletion_body((orders, 0, 1)), headers=alice)
    await app_client.get("/v1/deletions/some-id", headers=alice)
    text = (await app_client.get("/metrics")).text
    assert (
        'kafka_purge_http_requests_total{method="GET",route="/v1/deletions/{deletion_id}",status="404"}'
        in text
    )
    assert 'kafka_purge_http_requests_total{method="POST",route="/v1/deletions",status="202"}' in text
    assert "kafka_purge_deletions_accepted_total" in text
    assert "kafka_purge_claimed_partitions_total" in text
    assert "kafka_purge_backlog_up 1.0" in text  # the backlog query ran on this database


async def test_unreachable_cluster_on_submit_is_503_with_retry_after(
    settings: Settings, alice_token_for: Any
) -> None:
    down = ClusterSettings(bootstrap_servers=f"127.0.0.1:{_closed_port()}", request_timeout_ms=1_000)
    async with _client(
        settings.model_copy(update={"clusters": {"demo": down}}), run_executor=False
    ) as client:
        headers = await alice_token_for(client)
        response = await client.post("/v1/deletions", json=deletion_body(("orders", 0, 1)), headers=headers)
        assert response.status_code == 503, response.text
        assert response.headers["content-type"] == "application/problem+json"
        assert response.headers["retry-after"]
        assert (await client.get("/v1/deletions", headers=headers)).json()["items"] == []
