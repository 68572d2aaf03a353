"""Fixtures for executor tests (helpers live in ``helpers.worker``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from helpers.worker import Target
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.kafka import KafkaClusters
from app.settings import Settings
from app.worker import Executor


@pytest.fixture
def targets() -> list[Target]:
    return [Target("orders", p, 5) for p in range(4)]


@pytest.fixture
async def gateway(settings: Settings) -> AsyncIterator[KafkaClusters]:
    """The real Kafka gateway for the test's settings (the emulated cluster "demo")."""
    clusters = KafkaClusters(settings.clusters)
    await clusters.start()
    try:
        yield clusters
    finally:
        await clusters.close()


@pytest.fixture
def executor(
    sessionmaker: async_sessionmaker[AsyncSession], gateway: KafkaClusters, settings: Settings
) -> Executor:
    """An executor over the test's database and cluster, not started (tests drive it)."""
    return Executor(sessionmaker, gateway, settings, instance_id="test-executor")
