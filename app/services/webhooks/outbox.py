"""Writing deletion events to the webhook outbox, in the transaction of the change they report.

``enqueue_events`` is called by every use case that changes a deletion's state (accepting it, its last
partition's outcome, and any later step such as an approval) with the events of that change, inside
that change's write transaction: the outbox rows commit with the change, or not at all, so an event is
never lost nor sent for a change that rolled back. One row per event per subscribed webhook; the body
(a CloudEvent) is fixed here, so every attempt sends the same bytes.

On the accept and write-back paths this is one small query (the enabled webhooks) per transaction when
no webhook subscribes; the requester of an outcome is read only when a webhook wants it.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import Deletion
from app.adapters.db.repositories import webhook_deliveries as deliveries
from app.adapters.db.repositories import webhooks as repo
from app.domain.deletion_requests import DeletionStatus, PartitionStatus
from app.domain.webhooks import TERMINAL_EVENTS, DeletionEvent, EventType, cloud_event, event_body


async def enqueue_events(
    session: AsyncSession, events: Sequence[DeletionEvent], now: datetime | None = None
) -> int:
    """Write one outbox row per event of ``events`` per enabled webhook of the event's cluster that
    subscribes to its type (flushed, committed by the caller's transaction); how many were written."""
    if not events:
        return 0
    subscribers: dict[tuple[str, str], list[str]] = defaultdict(list)
    for subscription in await repo.subscriptions(session):
        for event_type in subscription.event_types:
            subscribers[(subscription.cluster, event_type)].append(subscription.id)
    wanted = [(e, ids) for e in events if (ids := subscribers.get((e.cluster, e.type.value)))]
    if not wanted:
        return 0
    unknown = [e.deletion_id for e, _ in wanted if e.requester is None]
    known = await repo.requesters(session, unknown) if unknown else {}
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


def outcome_event(
    deletion_id: str, cluster: str, status: str, counts: Mapping[str, int]
) -> DeletionEvent | None:
    """The event of a deletion that reached the terminal ``status`` (None for one that is no event:
    cancelled)."""
    event_type = TERMINAL_EVENTS.get(status)
    if event_type is None:
        return None
    partitions = {"total": sum(counts.values()), **counts}
    return DeletionEvent(event_type, deletion_id, cluster, status, partitions)


def ended_events(
    ended: Mapping[str, tuple[DeletionStatus, Mapping[PartitionStatus, int]]], clusters: Mapping[str, str]
) -> list[DeletionEvent]:
    """The events of deletions that just ended, by id with their status and partition counts (none for a
    cancelled one)."""
    found = []
    for deletion_id, (status, counts) in ended.items():
        by_status = {s.value: n for s, n in counts.items()}
        event = outcome_event(deletion_id, clusters[deletion_id], status.value, by_status)
        if event is not None:
            found.append(event)
    return found
