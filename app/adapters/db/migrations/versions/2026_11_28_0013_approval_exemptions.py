"""Approval rules cover every way of deleting unless exempted: ``approval_rule.exemptions`` (the ways an
administrator exempted a rule from; every existing rule starts with none, so retention policies over its
topics wait for approval at their next sweep) replaces ``applies_to_retention``; ``membership`` keeps the
groups each principal's tokens last reported.

Revision ID: 0013_approval_exemptions
Revises: 0012_webhooks
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_approval_exemptions"
down_revision: str | None = "0012_webhooks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("approval_rule") as batch:
        batch.add_column(sa.Column("exemptions", sa.JSON(), server_default=sa.text("'[]'"), nullable=False))
        batch.drop_column("applies_to_retention")
    op.create_table(
        "membership",
        sa.Column("principal", sa.String(length=512), nullable=False),
        sa.Column("groups", sa.JSON(), nullable=False),
        sa.Column("reported_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("principal", name=op.f("pk_membership")),
    )


def downgrade() -> None:
    op.drop_table("membership")
    with op.batch_alter_table("approval_rule") as batch:
        # The secure reading back: a rule exempted from retention did not apply to it.
        batch.add_column(
            sa.Column("applies_to_retention", sa.Boolean(), server_default=sa.true(), nullable=False)
        )
    op.execute(
        "UPDATE approval_rule SET applies_to_retention = FALSE "
        "WHERE CAST(exemptions AS TEXT) LIKE '%retention%'"
    )
    with op.batch_alter_table("approval_rule") as batch:
        batch.drop_column("exemptions")
