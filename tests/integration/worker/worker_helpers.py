"""Helpers for executor tests: deletions inserted straight into the tables, read-backs of their state."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import AuditEvent, Deletion, PartitionDeletion
from app.adapters.db.session import read_session, write_transaction
from app.audit import verify_chain


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
