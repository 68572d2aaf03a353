"""A webhook's deliveries: the outbox as its admins see it, and redelivery on request.

Seeing them needs what seeing the webhook needs (DESCRIBE on its CLUSTER); redelivering one needs ALTER
on it and is audited (``webhook.delivery_retried``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from app.adapters.db.repositories import webhook_deliveries as repo
from app.adapters.db.session import read_session, write_transaction
from app.adapters.db.webhook_models import WebhookDelivery
from app.audit import append_event, events
from app.audit.events import Actor
from app.auth import Principal
from app.errors import NotFound
from app.services.runtime import Runtime
from app.services.webhooks.admin import managed_webhook, visible_webhook


async def list_deliveries(
    runtime: Runtime,
    principal: Principal,
    webhook_id: str,
    *,
    status: str | None,
    before: int | None,
    limit: int,
) -> list[WebhookDelivery]:
    """The webhook's deliveries, newest first (of one ``status`` when given)."""
    await visible_webhook(runtime, principal, webhook_id)
    async with read_session(runtime.sessionmaker) as session:
        return await repo.list_deliveries(session, webhook_id, status=status, before=before, limit=limit)


async def retry_delivery(
    runtime: Runtime, principal: Principal, webhook_id: str, delivery_id: int, *, request_id: str
) -> WebhookDelivery:
    """Deliver again now: a dead or delivered delivery starts a fresh round of attempts, a pending one is
    attempted at once (needs ALTER on the webhook's CLUSTER)."""
    webhook = await managed_webhook(runtime, principal, webhook_id, request_id=request_id)
    async with write_transaction(runtime.sessionmaker) as session:
        delivery = await repo.get_delivery(session, webhook_id, delivery_id)
        if delivery is None:
            raise NotFound(f"No delivery {delivery_id} of webhook {webhook_id!r}.")
        was = delivery.status
        await repo.redeliver(session, delivery, datetime.now(UTC))
        event = events.webhook_delivery_retried(
            Actor.of(principal, request_id),
            webhook.cluster,
            delivery.deletion_id,
            webhook_id=webhook_id,
            delivery_id=delivery_id,
            event_id=delivery.event_id,
            was=was,
        )
        await append_event(session, event)
    return delivery
