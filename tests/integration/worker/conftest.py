"""Fixtures for executor tests (helpers live in worker_helpers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from worker_helpers import Target

from app.adapters.kafka import KafkaClusters
from app.settings import Settings


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
