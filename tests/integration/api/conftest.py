"""Fixtures for the API tests: bearer headers for dev-issuer clients, an emulated cluster with data."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from api_helpers import produce


@pytest.fixture
async def alice(token: Callable[[str], Awaitable[str]]) -> dict[str, str]:
    return {"Authorization": f"Bearer {await token('alice')}"}


@pytest.fixture
async def bob(token: Callable[[str], Awaitable[str]]) -> dict[str, str]:
    return {"Authorization": f"Bearer {await token('bob')}"}


@pytest.fixture
async def orders(emulator: Any) -> str:
    """Topic "orders" with 3 partitions holding 10, 20 and 30 records."""
    emulator.create_topic("orders", partitions=3, replication_factor=3)
    await produce(emulator, "orders", {0: 10, 1: 20, 2: 30})
    return "orders"
