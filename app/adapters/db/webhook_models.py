"""ORM models of webhooks and their durable outbox of deliveries.

Registered on ``models.Base`` (imported by ``app.adapters.db``), so migrations and the drift check see them.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.adapters.db.models import Base, BigId


class Webhook(Base):
    """An admin-managed target that receives a cluster's deletion events (``app.domain.webhook_events``)."""

    __tablename__ = "webhook"
    __table_args__ = (Index("ix_webhook_cluster", "cluster"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    cluster: Mapped[str] = mapped_column(String(255))
    url: Mapped[str] = mapped_column(Text)
    description: Mapped[str] = mapped_column(String(255))
    event_types: Mapped[list[str]] = mapped_column(JSON)
    # The HMAC key the deliveries are signed with (``whsec_…``): the service must hold it to sign, so it
    # is stored as given; it is never returned by a read.
    secret: Mapped[str] = mapped_column(Text)
    enabled: Mapped[bool] = mapped_column(Boolean)
    created_by: Mapped[str] = mapped_column(String(512))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class WebhookDelivery(Base):
    """One event for one webhook: the outbox row, written in the transaction of the change it reports,
    claimed by a delivering worker under a lease (``fence`` bumped by each claim), retried with backoff,
    dead-lettered after the last attempt."""

    __tablename__ = "webhook_delivery"
    __table_args__ = (
        Index("ix_webhook_delivery_status_next_attempt_at", "status", "next_attempt_at"),
        Index("ix_webhook_delivery_webhook_id_id", "webhook_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    webhook_id: Mapped[str] = mapped_column(ForeignKey("webhook.id", ondelete="CASCADE"))
    event_id: Mapped[str] = mapped_column(String(36))
    event_type: Mapped[str] = mapped_column(String(64))
    deletion_id: Mapped[str] = mapped_column(String(36))
    body: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer)
    fence: Mapped[int] = mapped_column(BigInteger)
    next_attempt_at: Mapped[datetime]
    lease_owner: Mapped[str | None] = mapped_column(String(128))
    lease_expires_at: Mapped[datetime | None]
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    delivered_at: Mapped[datetime | None]
