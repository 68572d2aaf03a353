"""Four-eyes approval: ``approval_rule`` (per cluster, which topics need whose approval),
``approval_request`` (what a protected deletion or retention policy waits for, with the frozen preview)
and ``approval_decision`` (each principal's approval or rejection); ``retention_policy.approval_status``.

Revision ID: 0011_approvals
Revises: 0010_connect_policies
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_approvals"
down_revision: str | None = "0010_connect_policies"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _time(name: str, nullable: bool = False) -> sa.Column[sa.DateTime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "approval_rule",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("cluster", sa.String(255), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("topics", sa.JSON(), nullable=False),
        sa.Column("approvers", sa.JSON(), nullable=False),
        sa.Column("required_approvals", sa.Integer(), nullable=False),
        sa.Column("expires_after_seconds", sa.Integer(), nullable=False),
        sa.Column("applies_to_retention", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(512), nullable=False),
        _time("created_at"),
        _time("updated_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_approval_rule")),
        sa.UniqueConstraint("cluster", "name", name=op.f("uq_approval_rule_cluster_name")),
    )
    op.create_table(
        "approval_request",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("cluster", sa.String(255), nullable=False),
        sa.Column("subject_kind", sa.String(16), nullable=False),
        sa.Column("subject_id", sa.String(36), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("subject_name", sa.String(255), nullable=False),
        sa.Column("requester", sa.String(512), nullable=False),
        sa.Column("requester_groups", sa.JSON(), nullable=False),
        sa.Column("topics", sa.JSON(), nullable=False),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("required_approvals", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("preview", sa.JSON(), nullable=True),
        _time("created_at"),
        _time("expires_at"),
        _time("decided_at", nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_approval_request")),
        sa.UniqueConstraint(
            "subject_kind",
            "subject_id",
            "round",
            name=op.f("uq_approval_request_subject_kind_subject_id_round"),
        ),
    )
    op.create_index(
        "ix_approval_request_status_expires_at", "approval_request", ["status", "expires_at"], unique=False
    )
    op.create_table(
        "approval_decision",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("request_id", BigId, nullable=False),
        sa.Column("principal", sa.String(512), nullable=False),
        sa.Column("approved_as", sa.JSON(), nullable=False),
        sa.Column("decision", sa.String(16), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        _time("decided_at"),
        sa.ForeignKeyConstraint(
            ["request_id"],
            ["approval_request.id"],
            name=op.f("fk_approval_decision_request_id_approval_request"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_approval_decision")),
        sa.UniqueConstraint(
            "request_id", "principal", name=op.f("uq_approval_decision_request_id_principal")
        ),
    )
    with op.batch_alter_table("retention_policy") as batch:
        batch.add_column(sa.Column("approval_status", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("retention_policy") as batch:
        batch.drop_column("approval_status")
    op.drop_table("approval_decision")
    op.drop_index("ix_approval_request_status_expires_at", table_name="approval_request")
    op.drop_table("approval_request")
    op.drop_table("approval_rule")
