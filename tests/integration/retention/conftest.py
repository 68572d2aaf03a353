"""Fixtures for the retention tests: the app without background workers (tests drive the scheduler and
the executor themselves), alice as a super user (KIP-11 allows her everything), an emulated cluster, and
one local Spark checkpoint root (``checkpoint_root``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.services.runtime import Runtime
from app.settings import Settings, SparkSettings
from app.worker import Executor
from app.worker.scheduler import RetentionScheduler


@pytest.fixture
def checkpoint_root(tmp_path: Path) -> Path:
    root = tmp_path / "checkpoints"
    root.mkdir()
    return root


@pytest.fixture
def settings(settings: Settings, checkpoint_root: Path) -> Settings:
    spark = SparkSettings(checkpoint_roots=f"{checkpoint_root},s3://lake/checkpoints/")
    return settings.model_copy(update={"super_users": "User:alice", "spark": spark})


@pytest.fixture
def run_executor() -> bool:
    return False


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[FastAPI]:
    from app.main import create_app

    application = create_app(settings, run_executor=False)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


@pytest.fixture
def runtime(app: FastAPI) -> Runtime:
    found: Runtime = app.state.runtime
    return found


@pytest.fixture
def scheduler(runtime: Runtime) -> RetentionScheduler:
    return RetentionScheduler(runtime, instance_id="test-scheduler")


@pytest.fixture
def executor(runtime: Runtime) -> Executor:
    return Executor(runtime.sessionmaker, runtime.gateway, runtime.settings, instance_id="test-executor")


async def _headers(client: httpx.AsyncClient, settings: Settings, who: str) -> dict[str, str]:
    secret = settings.auth.dev_clients[who].get_secret_value()
    response = await client.post(
        "/oauth/token", data={"grant_type": "client_credentials"}, auth=(who, secret)
    )
    assert response.status_code == 200, response.text
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


@pytest.fixture
async def alice(client: httpx.AsyncClient, settings: Settings) -> dict[str, str]:
    return await _headers(client, settings, "alice")


@pytest.fixture
def headers_for(client: httpx.AsyncClient, settings: Settings) -> Callable[[str], Awaitable[dict[str, str]]]:
    async def fetch(who: str) -> dict[str, str]:
        return await _headers(client, settings, who)

    return fetch


@pytest.fixture
async def inter(emulator: Any) -> str:
    emulator.create_topic("inter.a", 2)
    emulator.create_topic("other", 1)
    return "inter.a"
