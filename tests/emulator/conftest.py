"""Fixtures for the emulator's wire-level tests.

``cluster``: a started 3-broker ``EmulatedCluster`` on ephemeral ports (tests create their own topics),
with the shortened ``replica.fetch.wait.max.ms`` of tests/helpers/kafka_timing.py and DeleteRecords v3
(the LeaderOnly draft) enabled, which most DeleteRecords wire tests exercise.
``make_cluster``: starts clusters with other options (``await make_cluster(brokers=1, sasl_users=...)``),
the emulator's defaults (Kafka's timing, DeleteRecords v0-2) unless given, stopped after the test.
``raw``: opens raw connections (``RawConnection``) to a broker of ``cluster`` and closes them afterwards.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.emulator.factories import ClusterFactory, RawFactory
from helpers.emulator.wire_client import RawConnection
from helpers.kafka_timing import SHORT_FETCH_WAIT_MS

from kafka_emulator import EmulatedCluster


@pytest.fixture
async def cluster() -> AsyncIterator[EmulatedCluster]:
    async with EmulatedCluster(
        brokers=3, replica_fetch_wait_max_ms=SHORT_FETCH_WAIT_MS, delete_records_max_version=3
    ) as started:
        yield started


@pytest.fixture
async def make_cluster() -> AsyncIterator[ClusterFactory]:
    started: list[EmulatedCluster] = []

    async def make(**options: Any) -> EmulatedCluster:
        cluster = EmulatedCluster(**options)
        await cluster.start()
        started.append(cluster)
        return cluster

    yield make
    for cluster in started:
        await cluster.stop()


@pytest.fixture
async def raw(cluster: EmulatedCluster) -> AsyncIterator[RawFactory]:
    opened: list[RawConnection] = []

    async def connect(broker: int = 1) -> RawConnection:
        host, port = cluster.brokers[broker]
        connection = await RawConnection.open(host, port)
        opened.append(connection)
        return connection

    yield connect
    for connection in opened:
        await connection.close()
