"""Fixtures for the API tests: bearer headers for dev-issuer clients, an emulated cluster with data."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from helpers.kafka_records import produce

from app.settings import Settings


@pytest.fixture
async def alice(token: Callable[[str], Awaitable[str]]) -> dict[str, str]:
    return {"Authorization": f"Bearer {await token('alice')}"}


@pytest.fixture
async def bob(token: Callable[[str], Awaitable[str]]) -> dict[str, str]:
    return {"Authorization": f"Bearer {await token('bob')}"}


@pytest.fixture
def alice_token_for(settings: Settings) -> Callable[[httpx.AsyncClient], Awaitable[dict[str, str]]]:
    """Bearer headers for "alice" from the dev issuer of a client built inside the test."""
    secret = settings.auth.dev_clients["alice"].get_secret_value()

    async def fetch(client: httpx.AsyncClient) -> dict[str, str]:
        response = await client.post(
            "/oauth/token", data={"grant_type": "client_credentials"}, auth=("alice", secret)
        )
        assert response.status_code == 200, response.text
        return {"Authorization": f"Bearer {response.json()['access_token']}"}

    return fetch


@pytest.fixture
async def orders(emulator: Any) -> str:
    """Topic "orders" with 3 partitions holding 10, 20 and 30 records."""
    emulator.create_topic("orders", partitions=3, replication_factor=3)
    await produce(emulator, "orders", {0: 10, 1: 20, 2: 30})
    return "orders"
