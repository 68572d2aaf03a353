"""An emulator-backed ``KafkaClusters`` (the ``emulator`` fixture comes from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.kafka_gateway import CLUSTER, cluster_settings

from app.adapters.kafka import KafkaClusters


@pytest.fixture
async def gateway(emulator: Any) -> AsyncIterator[KafkaClusters]:
    """``KafkaClusters`` with one cluster, "demo", on the per-test emulator."""
    clusters = KafkaClusters({CLUSTER: cluster_settings(emulator)})
    await clusters.start()
    try:
        yield clusters
    finally:
        await clusters.close()
