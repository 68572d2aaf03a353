"""Fixtures for executor tests (helpers live in worker_helpers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from helpers.kafka_timing import KAFKA_FETCH_WAIT_MS
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


@pytest.fixture
def replica_fetch_wait_ms() -> float:
    """The executor's DeleteRecords, confirm and timeout paths run at Kafka's follower fetch timing."""
    return KAFKA_FETCH_WAIT_MS
