"""Queries on the audit trail (appending and verifying live in ``app.audit``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import AuditEvent


async def list_events(
    session: AsyncSession,
    *,
    since: datetime | None = None,
    action: str | None = None,
    after_id: int | None = None,
    limit: int,
) -> list[AuditEvent]:
    """Oldest first (the chain's order), starting after event ``after_id``."""
    query = select(AuditEvent)
    if since is not None:
        query = query.where(AuditEvent.occurred_at >= since)
    if action is not None:
        query = query.where(AuditEvent.action == action)
    if after_id is not None:
        query = query.where(AuditEvent.id > after_id)
    query = query.order_by(AuditEvent.id).limit(limit)
    return list((await session.execute(query)).scalars())
