"""Initial schema: deletions, their partitions (the executor's durable tasks), the audit chain.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Timestamp = sa.DateTime(timezone=True)
GENESIS_HASH = "0" * 64


def upgrade() -> None:
    _create_deletion()
    _create_partition_deletion()
    _create_audit()


def _create_deletion() -> None:
    op.create_table(
        "deletion",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("cluster", sa.String(255), nullable=False),
        sa.Column("principal", sa.String(512), nullable=False),
        sa.Column("client_host", sa.String(64), nullable=False),
        sa.Column("request_id", sa.String(64), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("leader_only", sa.Boolean(), nullable=False),
        sa.Column("timeout_ms", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("partition_count", sa.Integer(), nullable=False),
        sa.Column("topics", sa.JSON(), nullable=False),
        sa.Column("idempotency_key", sa.String(255), nullable=True),
        sa.Column("request_hash", sa.String(64), nullable=True),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.Column("finished_at", Timestamp, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deletion")),
        sa.UniqueConstraint(
            "principal", "idempotency_key", name=op.f("uq_deletion_principal_idempotency_key")
        ),
    )
    op.create_index("ix_deletion_created_at_id", "deletion", ["created_at", "id"])
    op.create_index("ix_deletion_status", "deletion", ["status"])


def _create_partition_deletion() -> None:
    op.create_table(
        "partition_deletion",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("deletion_id", sa.String(36), nullable=False),
        sa.Column("topic", sa.String(249), nullable=False),
        sa.Column("partition", sa.Integer(), nullable=False),
        sa.Column("requested_offset", sa.BigInteger(), nullable=False),
        sa.Column("resolved_offset", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("low_watermark", sa.BigInteger(), nullable=True),
        sa.Column("leader_log_start_offset", sa.BigInteger(), nullable=True),
        sa.Column("error_code", sa.String(64), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("lease_owner", sa.String(128), nullable=True),
        sa.Column("lease_expires_at", Timestamp, nullable=True),
        sa.Column("fence", sa.BigInteger(), nullable=False),
        sa.Column("next_attempt_at", Timestamp, nullable=False),
        sa.Column("deadline_at", Timestamp, nullable=True),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.ForeignKeyConstraint(
            ["deletion_id"],
            ["deletion.id"],
            name=op.f("fk_partition_deletion_deletion_id_deletion"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_partition_deletion")),
        sa.UniqueConstraint(
            "deletion_id",
            "topic",
            "partition",
            name=op.f("uq_partition_deletion_deletion_id_topic_partition"),
        ),
    )
    op.create_index("ix_partition_deletion_claim", "partition_deletion", ["status", "next_attempt_at"])


def _create_audit() -> None:
    op.create_table(
        "audit_event",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("occurred_at", Timestamp, nullable=False),
        sa.Column("principal", sa.String(512), nullable=False),
        sa.Column("client_host", sa.String(64), nullable=True),
        sa.Column("request_id", sa.String(64), nullable=True),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("cluster", sa.String(255), nullable=True),
        sa.Column("deletion_id", sa.String(36), nullable=True),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_event")),
        sa.UniqueConstraint("hash", name=op.f("uq_audit_event_hash")),
    )
    op.create_index("ix_audit_event_action", "audit_event", ["action"])
    op.create_index("ix_audit_event_occurred_at", "audit_event", ["occurred_at"])
    audit_head = op.create_table(
        "audit_head",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("last_event_id", sa.BigInteger(), nullable=False),
        sa.Column("last_hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_head")),
    )
    # The chain's genesis: the first event's prev_hash is 64 zeros.
    op.bulk_insert(audit_head, [{"id": 1, "last_event_id": 0, "last_hash": GENESIS_HASH}])


def downgrade() -> None:
    op.drop_table("audit_head")
    op.drop_index("ix_audit_event_occurred_at", table_name="audit_event")
    op.drop_index("ix_audit_event_action", table_name="audit_event")
    op.drop_table("audit_event")
    op.drop_index("ix_partition_deletion_claim", table_name="partition_deletion")
    op.drop_table("partition_deletion")
    op.drop_index("ix_deletion_status", table_name="deletion")
    op.drop_index("ix_deletion_created_at_id", table_name="deletion")
    op.drop_table("deletion")
