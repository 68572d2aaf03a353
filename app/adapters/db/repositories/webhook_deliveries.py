"""The webhook outbox: deliveries written with the change they report, claimed under leases, fenced.

A delivery is *due* when it is pending, its ``next_attempt_at`` has come and nobody holds a live lease on
it. Claiming sets the lease, counts the attempt and bumps ``fence``; the claimer's outcome is written only
if the fence it claimed with is still current, so a worker whose lease ran out (and whose delivery was
claimed again) changes nothing. A delivery in flight when its process dies is claimed again once its
lease has expired: delivery is at least once.

PostgreSQL claims with ``SELECT … FOR UPDATE SKIP LOCKED`` inside the UPDATE, so instances never wait on
each other; SQLite (which ignores SKIP LOCKED) with one ``UPDATE … RETURNING`` inside the BEGIN
IMMEDIATE of ``write_transaction``, which already serializes writers. Functions only flush.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from app.adapters.db.webhook_models import Webhook, WebhookDelivery
from app.domain.webhook_events import DeliveryStatus

D = WebhookDelivery
PENDING = DeliveryStatus.PENDING.value


class NewDelivery(NamedTuple):
    webhook_id: str
    event_id: str
    event_type: str
    deletion_id: str
    body: str


class ClaimedDelivery(NamedTuple):
    """A delivery held by a worker: what to send, where, signed with which secret."""

    id: int
    fence: int
    attempts: int
    event_id: str
    body: str
    url: str
    secret: str


class Outcome(NamedTuple):
    """What one attempt came to: delivered, or failed (then ``retry_at``, or None: dead-lettered)."""

    id: int
    fence: int
    delivered: bool
    status_code: int | None
    error: str | None
    retry_at: datetime | None


async def add_deliveries(session: AsyncSession, new: Sequence[NewDelivery], now: datetime) -> None:
    """Insert ``new`` as pending deliveries due now (one statement)."""
    if not new:
        return
    rows = [
        {
            **item._asdict(),
            "status": PENDING,
            "attempts": 0,
            "fence": 0,
            "next_attempt_at": now,
            "created_at": now,
            "updated_at": now,
        }
        for item in new
    ]
    await session.execute(insert(D), rows)


def _due(now: datetime) -> list[ColumnElement[bool]]:
    return [
        D.status == PENDING,
        D.next_attempt_at <= now,
        or_(D.lease_expires_at.is_(None), D.lease_expires_at <= now),
    ]


async def any_due(session: AsyncSession, now: datetime) -> bool:
    """Whether a delivery is due (a read: a worker claims, which takes SQLite's write lock, only then)."""
    query = select(D.id).where(*_due(now)).limit(1)
    return (await session.execute(query)).first() is not None


async def claim_due(
    session: AsyncSession, *, owner: str, now: datetime, lease_seconds: float, limit: int
) -> list[ClaimedDelivery]:
    """Claim up to ``limit`` due deliveries for ``owner``, oldest ``next_attempt_at`` first."""
    due_ids = select(D.id).where(*_due(now)).order_by(D.next_attempt_at, D.id).limit(limit)
    if session.get_bind().dialect.name == "postgresql":
        # Materialized, so the locking subquery runs exactly once; rows other claimers hold are skipped.
        locked = due_ids.with_for_update(skip_locked=True).cte("due").prefix_with("MATERIALIZED")
        target = D.id.in_(select(locked.c.id))
    else:
        target = D.id.in_(due_ids.scalar_subquery())
    claim = (
        update(D)
        .where(target)
        .values(
            lease_owner=owner,
            lease_expires_at=now + timedelta(seconds=lease_seconds),
            fence=D.fence + 1,
            attempts=D.attempts + 1,
            updated_at=now,
        )
        .returning(D.id, D.fence, D.attempts, D.event_id, D.body, D.webhook_id)
    )
    rows = (await session.execute(claim, execution_options={"synchronize_session": False})).all()
    if not rows:
        return []
    targets = select(Webhook.id, Webhook.url, Webhook.secret).where(
        Webhook.id.in_({r.webhook_id for r in rows})
    )
    by_id = {i: (url, secret) for i, url, secret in (await session.execute(targets)).all()}
    return [
        ClaimedDelivery(r.id, r.fence, r.attempts, r.event_id, r.body, *by_id[r.webhook_id]) for r in rows
    ]


async def record_outcomes(session: AsyncSession, outcomes: Sequence[Outcome], now: datetime) -> int:
    """Write each outcome whose fence is still current; how many were written."""
    written = 0
    for outcome in outcomes:
        values: dict[str, Any] = {
            "lease_expires_at": None,
            "last_status_code": outcome.status_code,
            "last_error": outcome.error,
            "updated_at": now,
        }
        if outcome.delivered:
            values.update(status=DeliveryStatus.DELIVERED.value, delivered_at=now)
        elif outcome.retry_at is None:
            values.update(status=DeliveryStatus.DEAD.value)
        else:
            values.update(next_attempt_at=outcome.retry_at)
        stmt = (
            update(D)
            .where(D.id == outcome.id, D.fence == outcome.fence, D.status == PENDING)
            .values(**values)
            .execution_options(synchronize_session=False)
        )
        written += (await session.execute(stmt)).rowcount  # type: ignore[attr-defined]
    return written


async def list_deliveries(
    session: AsyncSession, webhook_id: str, *, status: str | None, before: int | None, limit: int
) -> list[WebhookDelivery]:
    """A webhook's deliveries, newest first, ``before`` an id (a cursor)."""
    query = select(D).where(D.webhook_id == webhook_id)
    if status is not None:
        query = query.where(D.status == status)
    if before is not None:
        query = query.where(D.id < before)
    return list((await session.execute(query.order_by(D.id.desc()).limit(limit))).scalars())


async def get_delivery(session: AsyncSession, webhook_id: str, delivery_id: int) -> WebhookDelivery | None:
    query = select(D).where(D.webhook_id == webhook_id, D.id == delivery_id)
    return (await session.execute(query)).scalar_one_or_none()


async def redeliver(session: AsyncSession, delivery: WebhookDelivery, now: datetime) -> None:
    """Make ``delivery`` due now: a delivered or dead one starts a fresh round of attempts (its fence
    bumped, so nothing written for an earlier round lands); a pending one is just brought forward."""
    if delivery.status != PENDING:
        delivery.status = PENDING
        delivery.attempts = 0
        delivery.fence += 1
        delivery.lease_expires_at = None
    delivery.next_attempt_at = now
    delivery.updated_at = now
    await session.flush()
