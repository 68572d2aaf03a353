"""The service started with its workers sweeps retention policies on its own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx
import pytest
from retention_helpers import policy_body, wait_until


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
