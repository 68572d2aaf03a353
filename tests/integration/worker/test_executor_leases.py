"""Leases while a batch is out: renewed during a long broker wait, given back on a graceful stop."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from helpers.databases import PG_ADMIN_DSN
from helpers.worker import (
    Target,
    deletion_status,
    drive,
    insert_deletion,
    leader_of,
    partitions_of,
    produce,
    wait_status,
    wait_until,
)
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.kafka import KafkaClusters
from app.settings import Settings
from app.worker import Executor

Maker = async_sessionmaker[AsyncSession]


@pytest.fixture
def short_leases(settings: Settings) -> Settings:
    return settings.model_copy(update={"worker": settings.worker.model_copy(update={"lease_seconds": 1.0})})


@pytest.fixture
async def slow_leader(emulator: Any) -> int:
    emulator.create_topic("slow", partitions=1, replication_factor=3)
    await produce(emulator, "slow", {0: 5})
    leader = leader_of(emulator, "slow", 0)
    emulator.inject_fault(leader, "DeleteRecords", delay_ms=2_500)
    return leader


async def test_leases_are_renewed_while_the_broker_holds_the_request(
    emulator: Any, sessionmaker: Maker, gateway: KafkaClusters, short_leases: Settings, slow_leader: int
) -> None:
    busy = Executor(sessionmaker, gateway, short_leases, instance_id="busy")
    other = Executor(sessionmaker, gateway, short_leases, instance_id="other")
    deletion_id = await insert_deletion(sessionmaker, [Target("slow", 0, 3)])
    sending = asyncio.create_task(busy.run_once())
    await wait_until(lambda: not emulator.state()["faults"])
    # Well past the 1 s lease: only renewal keeps the row away from the other instance.
    for _ in range(8):
        await asyncio.sleep(0.25)
        assert await other.run_once() == 0
    assert await sending == 1
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.status, row.fence, row.lease_owner) == ("succeeded", 1, "busy")


async def test_graceful_stop_gives_the_leases_back(
    emulator: Any, sessionmaker: Maker, gateway: KafkaClusters, settings: Settings, slow_leader: int
) -> None:
    stopping = Executor(sessionmaker, gateway, settings, instance_id="stopping")
    deletion_id = await insert_deletion(sessionmaker, [Target("slow", 0, 3)])
    await stopping.start()
    await wait_until(lambda: not emulator.state()["faults"])
    # Claimed means started, even before any outcome came back.
    assert await wait_status(sessionmaker, deletion_id, until=["in_progress"]) == "in_progress"
    await stopping.stop(grace_seconds=0.1)
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.status, row.lease_expires_at, row.fence) == ("in_progress", None, 1)
    assert await deletion_status(sessionmaker, deletion_id) == "in_progress"
    # Another instance takes the row at once instead of waiting out a 30 s lease.
    successor = Executor(sessionmaker, gateway, settings, instance_id="successor")
    assert await drive(successor, sessionmaker, deletion_id, timeout_s=5) == "succeeded"
    [row] = await partitions_of(sessionmaker, deletion_id)
    assert (row.fence, row.lease_owner, row.low_watermark) == (2, "successor", 3)


async def test_the_loop_survives_losing_its_database_connections(
    emulator: Any, sessionmaker: Maker, gateway: KafkaClusters, settings: Settings, migrated_url: str
) -> None:
    if not migrated_url.startswith("postgresql"):
        pytest.skip("connections are only terminated on PostgreSQL")
    emulator.create_topic("steady", partitions=2, replication_factor=3)
    await produce(emulator, "steady", {0: 3, 1: 3})
    executor = Executor(sessionmaker, gateway, settings, instance_id="steady")
    await executor.start()
    try:
        first = await insert_deletion(sessionmaker, [Target("steady", 0, 1)])
        executor.wake()
        assert await wait_status(sessionmaker, first) == "succeeded"
        database = migrated_url.rsplit("/", 1)[1]
        admin = await asyncpg.connect(PG_ADMIN_DSN)
        try:
            killed = await admin.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1", database
            )
        finally:
            await admin.close()
        assert killed >= 1
        second = await insert_deletion(sessionmaker, [Target("steady", 1, 2)])
        executor.wake()
        assert await wait_status(sessionmaker, second) == "succeeded"
        assert executor.running
    finally:
        await executor.stop()
