"""Webhook rows written straight to the database, as registration stored them (or as an earlier
configuration or version let them be stored), for the delivery and outbox tests."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.session import write_transaction
from app.adapters.db.webhook_models import Webhook
from app.domain.webhook_events import EventType, new_secret


async def stored_webhook(
    sessionmaker: async_sessionmaker[AsyncSession],
    url: str,
    *,
    cluster: str = "demo",
    types: tuple[EventType, ...] = tuple(EventType),
    secret: str | None = None,
    enabled: bool = True,
    created_at: datetime | None = None,
) -> str:
    """The id of a new webhook of ``cluster`` to ``url`` for ``types``."""
    at = created_at or datetime.now(UTC)
    webhook = Webhook(
        id=str(uuid.uuid4()),
        cluster=cluster,
        url=url,
        description="",
        event_types=[t.value for t in types],
        secret=secret or new_secret(),
        enabled=enabled,
        created_by="User:admin",
        created_at=at,
        updated_at=at,
    )
    async with write_transaction(sessionmaker) as session:
        session.add(webhook)
    return webhook.id
