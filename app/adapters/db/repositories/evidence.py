"""Reads for erasure evidence and certificates: a deletion's audit events by action, and all of its
partitions."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import AuditEvent, PartitionDeletion


async def first_event(session: AsyncSession, deletion_id: str, action: str) -> AuditEvent | None:
    query = (
        select(AuditEvent)
        .where(AuditEvent.deletion_id == deletion_id, AuditEvent.action == action)
        .order_by(AuditEvent.id)
        .limit(1)
    )
    return (await session.execute(query)).scalar_one_or_none()


async def last_event(session: AsyncSession, deletion_id: str, actions: Collection[str]) -> AuditEvent | None:
    """The newest event of the deletion with one of ``actions`` (chain order)."""
    query = (
        select(AuditEvent)
        .where(AuditEvent.deletion_id == deletion_id, AuditEvent.action.in_(list(actions)))
        .order_by(AuditEvent.id.desc())
        .limit(1)
    )
    return (await session.execute(query)).scalar_one_or_none()


async def all_partitions(session: AsyncSession, deletion_id: str) -> list[PartitionDeletion]:
    query = (
        select(PartitionDeletion)
        .where(PartitionDeletion.deletion_id == deletion_id)
        .order_by(PartitionDeletion.topic, PartitionDeletion.partition)
    )
    return list((await session.execute(query)).scalars())
