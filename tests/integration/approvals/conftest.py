"""Fixtures for the four-eyes approval tests: a one-broker emulated cluster (these tests are about who
may approve, not about replication), the service's settings with its approval clients, and the desk."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.approvals import Desk, desk_for, make_settings

from app.settings import ClusterSettings, Settings


@pytest.fixture
def emulator_brokers() -> int:
    """One broker is enough here: these tests are about who may, not about replication."""
    return 1


@pytest.fixture
def settings(migrated_url: str, clusters: dict[str, ClusterSettings]) -> Settings:
    return make_settings(migrated_url, clusters)


@pytest.fixture
async def desk(settings: Settings, emulator: Any) -> AsyncIterator[Desk]:
    async with desk_for(settings, emulator) as opened:
        yield opened
