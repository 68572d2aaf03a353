"""Queries on webhooks: the admin's CRUD, and the webhook outbox the deletion use cases write events to.

``enqueue_events`` is called by every use case that changes a deletion's state (accepting it, its last
partition's outcome, and any later step such as an approval) with the events of that change, inside
that change's write transaction: the outbox rows commit with the change, or not at all, so an event is
never lost nor sent for a change that rolled back. One row per event per subscribed webhook; the body
(a CloudEvent) is fixed here, so every attempt sends the same bytes.

On the accept and outcome paths this is one small query (the enabled webhooks) per transaction when
no webhook subscribes; the requester of an outcome is read only when a webhook wants it.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import Deletion
from app.adapters.db.repositories import webhook_deliveries as deliveries
from app.adapters.db.webhook_models import Webhook
from app.domain.webhook_events import DeletionEvent, EventType, cloud_event, event_body


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


async def enqueue_events(
    session: AsyncSession, events: Sequence[DeletionEvent], now: datetime | None = None
) -> int:
    """Write one outbox row per event of ``events`` per enabled webhook of the event's cluster that
    subscribes to its type (flushed, committed by the caller's transaction); how many were written."""
    if not events:
        return 0
    subscribers: dict[tuple[str, str], list[str]] = defaultdict(list)
    for subscription in await subscriptions(session):
        for event_type in subscription.event_types:
            subscribers[(subscription.cluster, event_type)].append(subscription.id)
    wanted = [(e, ids) for e in events if (ids := subscribers.get((e.cluster, e.type.value)))]
    if not wanted:
        return 0
    unknown = [e.deletion_id for e, _ in wanted if e.requester is None]
    known = await requesters(session, unknown) if unknown else {}
    now = now or datetime.now(UTC)
    new: list[deliveries.NewDelivery] = []
    for event, webhook_ids in wanted:
        event_id = str(uuid.uuid4())
        requester = event.requester or known.get(event.deletion_id, "")
        body = event_body(cloud_event(event, event_id, now, requester))
        new.extend(
            deliveries.NewDelivery(webhook_id, event_id, event.type.value, event.deletion_id, body)
            for webhook_id in webhook_ids
        )
    await deliveries.add_deliveries(session, new, now)
    return len(new)


async def enqueue_event(
    session: AsyncSession,
    event_type: EventType,
    deletion: Deletion,
    partitions: Mapping[str, int] | None = None,
) -> int:
    """``enqueue_events`` for one event of a deletion row (``partitions``: counts by partition status;
    default all ``total``)."""
    counts = {"total": deletion.partition_count, **(partitions or {})}
    event = DeletionEvent(
        event_type, deletion.id, deletion.cluster, deletion.status, counts, deletion.principal
    )
    return await enqueue_events(session, [event])


def accepted_events(stored: Sequence[Deletion]) -> list[DeletionEvent]:
    """The ``deletion.accepted`` events of deletions just stored."""
    return [
        DeletionEvent(
            EventType.ACCEPTED, d.id, d.cluster, d.status, {"total": d.partition_count}, d.principal
        )
        for d in stored
    ]
