"""The service started with its workers sweeps retention policies on its own, and so does a process that
runs the workers without the HTTP app."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx
import pytest
from helpers.retention import policy_body, wait_until

from app.services.runtime import Runtime
from app.worker.standalone import standalone_workers


@pytest.fixture
def run_executor() -> bool:
    return True


async def test_the_lifespan_starts_the_scheduler(
    app_client: httpx.AsyncClient, token: Callable[[str], Awaitable[str]], emulator: object
) -> None:
    headers = {"Authorization": f"Bearer {await token('alice')}"}
    created = await app_client.post("/v1/clusters/demo/policies", json=policy_body(), headers=headers)
    assert created.status_code == 201, created.text

    async def swept() -> bool:
        runs = await app_client.get("/v1/clusters/demo/policies/inter/runs", headers=headers)
        return bool(runs.json()["items"])

    await wait_until(swept)


async def test_a_workers_only_process_sweeps_too(
    client: httpx.AsyncClient, alice: dict[str, str], inter: str, runtime: Runtime
) -> None:
    created = await client.post("/v1/clusters/demo/policies", json=policy_body(), headers=alice)
    assert created.status_code == 201, created.text
    async with standalone_workers(runtime.settings, runtime.sessionmaker, runtime.gateway) as workers:
        scheduler = workers.scheduler
        assert scheduler.running
        assert workers.executor.running

        async def swept() -> bool:
            runs = await client.get("/v1/clusters/demo/policies/inter/runs", headers=alice)
            return bool(runs.json()["items"])

        await wait_until(swept)
    assert not scheduler.running
