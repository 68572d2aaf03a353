"""Webhooks and their outbox: ``webhook`` (admin-managed targets of a cluster's deletion events) and
``webhook_delivery`` (one row per event per webhook, written in the transaction of the change it reports,
delivered at least once by the workers under leases).

Revision ID: 0012_webhooks
Revises: 0011_approvals
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_webhooks"
down_revision: str | None = "0011_approvals"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _time(name: str, nullable: bool = False) -> sa.Column[sa.DateTime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "webhook",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("cluster", sa.String(255), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("description", sa.String(255), nullable=False),
        sa.Column("event_types", sa.JSON(), nullable=False),
        sa.Column("secret", sa.Text(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(512), nullable=False),
        _time("created_at"),
        _time("updated_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook")),
    )
    op.create_index("ix_webhook_cluster", "webhook", ["cluster"])
    op.create_table(
        "webhook_delivery",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("webhook_id", sa.String(36), nullable=False),
        sa.Column("event_id", sa.String(36), nullable=False),
        sa.Column("event_type", sa.String(64), nullable=False),
        sa.Column("deletion_id", sa.String(36), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("fence", sa.BigInteger(), nullable=False),
        _time("next_attempt_at"),
        sa.Column("lease_owner", sa.String(128), nullable=True),
        _time("lease_expires_at", nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        _time("created_at"),
        _time("updated_at"),
        _time("delivered_at", nullable=True),
        sa.ForeignKeyConstraint(
            ["webhook_id"],
            ["webhook.id"],
            name=op.f("fk_webhook_delivery_webhook_id_webhook"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_delivery")),
    )
    op.create_index(
        "ix_webhook_delivery_status_next_attempt_at", "webhook_delivery", ["status", "next_attempt_at"]
    )
    op.create_index("ix_webhook_delivery_webhook_id_id", "webhook_delivery", ["webhook_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_webhook_delivery_webhook_id_id", table_name="webhook_delivery")
    op.drop_index("ix_webhook_delivery_status_next_attempt_at", table_name="webhook_delivery")
    op.drop_table("webhook_delivery")
    op.drop_index("ix_webhook_cluster", table_name="webhook")
    op.drop_table("webhook")
