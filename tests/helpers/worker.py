"""Helpers for executor tests: deletions inserted straight into the tables, read-backs of their state."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aiokafka import AIOKafkaProducer
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import AuditEvent, Deletion, PartitionDeletion
from app.adapters.db.session import read_session, write_transaction
from app.audit import verify_chain
from app.worker import Executor

TERMINAL = ("succeeded", "partially_failed", "failed", "cancelled")


@dataclass(frozen=True)
class Target:
    topic: str
    partition: int
    offset: int


async def insert_deletion(
    sessionmaker: async_sessionmaker[AsyncSession],
    targets: Sequence[Target],
    *,
    cluster: str = "demo",
    leader_only: bool = False,
    timeout_ms: int = 10_000,
    status: str = "pending",
) -> str:
    """A deletion as the API stores it once accepted (offsets already resolved)."""
    now = datetime.now(UTC)
    deletion_id = str(uuid.uuid4())
    async with write_transaction(sessionmaker) as session:
        session.add(
            Deletion(
                id=deletion_id,
                cluster=cluster,
                principal="User:alice",
                client_host="127.0.0.1",
                request_id=uuid.uuid4().hex,
                reason="test",
                leader_only=leader_only,
                timeout_ms=timeout_ms,
                status=status,
                partition_count=len(targets),
                topics=sorted({t.topic for t in targets}),
                idempotency_key=None,
                request_hash=None,
                created_at=now,
                updated_at=now,
                finished_at=None,
            )
        )
        await session.flush()
        session.add_all(
            PartitionDeletion(
                deletion_id=deletion_id,
                topic=t.topic,
                partition=t.partition,
                requested_offset=t.offset,
                resolved_offset=t.offset,
                status="pending",
                attempts=0,
                fence=0,
                next_attempt_at=now,
                updated_at=now,
            )
            for t in targets
        )
    return deletion_id


async def partitions_of(
    sessionmaker: async_sessionmaker[AsyncSession], deletion_id: str
) -> list[PartitionDeletion]:
    async with read_session(sessionmaker) as session:
        query = (
            select(PartitionDeletion)
            .where(PartitionDeletion.deletion_id == deletion_id)
            .order_by(PartitionDeletion.topic, PartitionDeletion.partition)
        )
        return list((await session.execute(query)).scalars().all())


async def deletion_status(sessionmaker: async_sessionmaker[AsyncSession], deletion_id: str) -> str:
    async with read_session(sessionmaker) as session:
        return (await session.execute(select(Deletion.status).where(Deletion.id == deletion_id))).scalar_one()


async def audit_events(sessionmaker: async_sessionmaker[AsyncSession], action: str) -> list[dict[str, Any]]:
    async with read_session(sessionmaker) as session:
        query = select(AuditEvent).where(AuditEvent.action == action).order_by(AuditEvent.id)
        return [
            {"deletion_id": e.deletion_id, "details": e.details, "principal": e.principal}
            for e in (await session.execute(query)).scalars().all()
        ]


async def assert_chain_ok(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    async with read_session(sessionmaker) as session:
        result = await verify_chain(session)
    assert result.ok, result


async def produce(emulator: Any, topic: str, counts: dict[int, int]) -> None:
    """Write ``counts[p]`` records to each partition with acks=all: they are committed (the leader's high
    watermark is past them) when this returns. Followers learn that high watermark with their next fetch,
    up to ``replica.fetch.wait.max.ms`` later, as in Kafka; nothing here waits for it."""
    producer = AIOKafkaProducer(bootstrap_servers=emulator.bootstrap, linger_ms=5, acks="all")
    await producer.start()
    try:
        futures = [
            await producer.send(topic, b"r%d" % i, partition=p) for p, n in counts.items() for i in range(n)
        ]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


def partition_state(emulator: Any, topic: str, partition: int) -> dict[str, Any]:
    for state in emulator.state()["topics"][topic]["partitions"]:
        if state["partition"] == partition:
            return dict(state)
    raise KeyError(f"{topic}-{partition}")


def log_start_offsets(emulator: Any, topic: str, partition: int) -> dict[int, int]:
    """Broker id -> that replica's log start offset."""
    replicas = partition_state(emulator, topic, partition)["replica_states"]
    return {int(broker): int(state["log_start_offset"]) for broker, state in replicas.items()}


def leader_of(emulator: Any, topic: str, partition: int) -> int:
    return int(partition_state(emulator, topic, partition)["leader"])


async def wait_until(check: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached before the deadline")
        await asyncio.sleep(0.02)


async def drive(
    executor: Executor,
    sessionmaker: async_sessionmaker[AsyncSession],
    deletion_id: str,
    until: Sequence[str] = TERMINAL,
    timeout_s: float = 15.0,
) -> str:
    """Run the executor pass by pass until the deletion's status is one of ``until``."""
    deadline = time.monotonic() + timeout_s
    while (status := await deletion_status(sessionmaker, deletion_id)) not in until:
        if time.monotonic() > deadline:
            raise AssertionError(f"deletion still {status} after {timeout_s} s")
        if await executor.run_once() == 0:
            await asyncio.sleep(0.02)
    return status


async def wait_status(
    sessionmaker: async_sessionmaker[AsyncSession],
    deletion_id: str,
    until: Sequence[str] = TERMINAL,
    timeout_s: float = 15.0,
) -> str:
    """Poll (without running anything) until the deletion's status is one of ``until``."""
    deadline = time.monotonic() + timeout_s
    while (status := await deletion_status(sessionmaker, deletion_id)) not in until:
        if time.monotonic() > deadline:
            raise AssertionError(f"deletion still {status} after {timeout_s} s")
        await asyncio.sleep(0.02)
    return status
