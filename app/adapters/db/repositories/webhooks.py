"""Queries on webhooks: the admin's CRUD, and the subscriptions an outbox write matches events against."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import Deletion
from app.adapters.db.webhook_models import Webhook


class Subscription(NamedTuple):
    """An enabled webhook as the outbox sees it: which cluster's events of which types it takes."""

    id: str
    cluster: str
    event_types: frozenset[str]


async def get_webhook(session: AsyncSession, webhook_id: str) -> Webhook | None:
    return await session.get(Webhook, webhook_id)


async def list_webhooks(session: AsyncSession, clusters: Collection[str]) -> list[Webhook]:
    """The webhooks of ``clusters``, oldest first."""
    query = (
        select(Webhook).where(Webhook.cluster.in_(sorted(clusters))).order_by(Webhook.created_at, Webhook.id)
    )
    return list((await session.execute(query)).scalars())


async def add_webhook(session: AsyncSession, webhook: Webhook) -> None:
    session.add(webhook)
    await session.flush()


async def delete_webhook(session: AsyncSession, webhook: Webhook) -> None:
    await session.delete(webhook)
    await session.flush()


async def subscriptions(session: AsyncSession) -> list[Subscription]:
    """Every enabled webhook (one small query: the outbox runs it in each transaction that reports events)."""
    query = select(Webhook.id, Webhook.cluster, Webhook.event_types).where(Webhook.enabled.is_(True))
    return [Subscription(i, c, frozenset(t)) for i, c, t in (await session.execute(query)).all()]


async def requesters(session: AsyncSession, deletion_ids: Sequence[str]) -> dict[str, str]:
    """Who asked for each deletion (its principal)."""
    query = select(Deletion.id, Deletion.principal).where(Deletion.id.in_(sorted(set(deletion_ids))))
    return {row.id: row.principal for row in await session.execute(query)}
