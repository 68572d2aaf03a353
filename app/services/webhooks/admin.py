"""Managing webhooks, as Kafka manages a cluster's ACLs: ALTER on the webhook's CLUSTER to create,
change or delete one, DESCRIBE on it to see one (a webhook the caller may not see is a 404). Every
change is audited in its transaction, with the webhook as it stands after it (never its secret).

Targets are set by admins only, and are checked against the target policy
(``app.domain.webhook_targets``) here and again at each delivery (``app.worker.webhooks``).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from app.adapters.db.repositories import webhooks as repo
from app.adapters.db.session import read_session, write_transaction
from app.adapters.db.webhook_models import Webhook
from app.audit import append_event, events
from app.audit.events import Actor
from app.auth import Principal
from app.domain.acl import Operation
from app.domain.webhook_events import new_secret
from app.domain.webhook_targets import TargetRefused, parse_target
from app.errors import ClusterNotFound, FieldError, NotFound, ValidationFailed
from app.schemas.webhooks import WebhookCreate, WebhookRead, WebhookUpdate
from app.services.runtime import Runtime


def webhook_read(webhook: Webhook) -> WebhookRead:
    return WebhookRead.model_validate(webhook, from_attributes=True)


def _audited(webhook: Webhook) -> dict[str, Any]:
    return webhook_read(webhook).model_dump(mode="json", exclude={"created_at", "updated_at"})


def _check_host(runtime: Runtime, url: str) -> None:
    """422 unless the target policy admits the URL's host (a name is resolved and checked at each
    delivery, not here)."""
    try:
        runtime.settings.webhooks.target_policy().check(parse_target(url))
    except TargetRefused as exc:
        raise ValidationFailed(
            "The service may not send to this URL.", errors=[FieldError("#/url", str(exc))]
        ) from None


async def create_webhook(
    runtime: Runtime, principal: Principal, body: WebhookCreate, *, request_id: str
) -> tuple[Webhook, str]:
    """Create a webhook (needs ALTER on its CLUSTER); the webhook and its secret (shown once)."""
    if body.cluster not in runtime.settings.clusters:
        raise ClusterNotFound(
            f"Unknown cluster {body.cluster!r}.", errors=[FieldError("#/cluster", "not a configured cluster")]
        )
    await runtime.authorization.check_cluster(principal, body.cluster, Operation.ALTER, request_id=request_id)
    _check_host(runtime, body.url)
    now = datetime.now(UTC)
    secret = body.secret or new_secret()
    webhook = Webhook(
        id=str(uuid.uuid4()),
        cluster=body.cluster,
        url=body.url,
        description=body.description,
        event_types=[t.value for t in body.event_types],
        secret=secret,
        enabled=body.enabled,
        created_by=principal.name,
        created_at=now,
        updated_at=now,
    )
    async with write_transaction(runtime.sessionmaker) as session:
        await repo.add_webhook(session, webhook)
        actor = Actor.of(principal, request_id)
        await append_event(session, events.webhook_created(actor, webhook.cluster, _audited(webhook)))
    return webhook, secret


async def visible_clusters(runtime: Runtime, principal: Principal) -> list[str]:
    """The configured clusters whose webhooks ``principal`` may see (DESCRIBE on CLUSTER)."""
    authorization = runtime.authorization
    return [
        cluster
        for cluster in runtime.settings.clusters
        if await authorization.may_on_cluster(principal, cluster, Operation.DESCRIBE)
    ]


async def list_webhooks(runtime: Runtime, principal: Principal, cluster: str | None) -> list[Webhook]:
    """The webhooks of the clusters the caller may describe (of ``cluster`` only, when given)."""
    clusters = [c for c in await visible_clusters(runtime, principal) if cluster in (None, c)]
    if not clusters:
        return []
    async with read_session(runtime.sessionmaker) as session:
        return await repo.list_webhooks(session, clusters)


async def visible_webhook(runtime: Runtime, principal: Principal, webhook_id: str) -> Webhook:
    """The webhook, if the caller may see it (DESCRIBE on its CLUSTER); else 404."""
    async with read_session(runtime.sessionmaker) as session:
        webhook = await repo.get_webhook(session, webhook_id)
    if webhook is None or not await runtime.authorization.may_on_cluster(
        principal, webhook.cluster, Operation.DESCRIBE
    ):
        raise NotFound(f"No webhook {webhook_id!r}.")
    return webhook


async def managed_webhook(
    runtime: Runtime, principal: Principal, webhook_id: str, *, request_id: str
) -> Webhook:
    """The webhook, if the caller may see it (else 404) and change it: ALTER on its CLUSTER (else 403)."""
    seen = await visible_webhook(runtime, principal, webhook_id)
    await runtime.authorization.check_cluster(principal, seen.cluster, Operation.ALTER, request_id=request_id)
    return seen


async def update_webhook(
    runtime: Runtime, principal: Principal, webhook_id: str, body: WebhookUpdate, *, request_id: str
) -> Webhook:
    """Change a webhook (needs ALTER on its CLUSTER)."""
    await managed_webhook(runtime, principal, webhook_id, request_id=request_id)
    if body.url is not None:
        _check_host(runtime, body.url)
    async with write_transaction(runtime.sessionmaker) as session:
        webhook = await repo.get_webhook(session, webhook_id)
        if webhook is None:
            raise NotFound(f"No webhook {webhook_id!r}.")
        changes = body.model_dump(exclude_none=True)
        if body.event_types is not None:
            changes["event_types"] = [t.value for t in body.event_types]
        for name, value in changes.items():
            setattr(webhook, name, value)
        webhook.updated_at = datetime.now(UTC)
        await session.flush()
        actor = Actor.of(principal, request_id)
        await append_event(
            session, events.webhook_updated(actor, webhook.cluster, _audited(webhook), list(changes))
        )
    return webhook


async def delete_webhook(runtime: Runtime, principal: Principal, webhook_id: str, *, request_id: str) -> None:
    """Delete a webhook and its deliveries (needs ALTER on its CLUSTER)."""
    await managed_webhook(runtime, principal, webhook_id, request_id=request_id)
    async with write_transaction(runtime.sessionmaker) as session:
        webhook = await repo.get_webhook(session, webhook_id)
        if webhook is None:
            raise NotFound(f"No webhook {webhook_id!r}.")
        details = _audited(webhook)
        await repo.delete_webhook(session, webhook)
        actor = Actor.of(principal, request_id)
        await append_event(session, events.webhook_deleted(actor, webhook.cluster, details))
