"""Kafka Connect retention policies: KIP-762's safety options on a policy, and several deletions per run.

``retention_policy.skip_foreign_active_groups`` skips topics an active group outside the policy's
consumers may read; ``retention_policy.await_previous_deletion`` starts no sweep while the deletions of
the previous one are not all terminal. ``policy_run.deletion_ids`` lists every deletion of a run (a sweep
larger than ``max_partitions`` submits several; ``deletion_id`` stays the first).

Revision ID: 0010_connect_policies
Revises: 0009_audit_tamper_evidence
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_connect_policies"
down_revision: str | None = "0009_audit_tamper_evidence"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("retention_policy") as batch:
        batch.add_column(
            sa.Column("skip_foreign_active_groups", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch.add_column(
            sa.Column("await_previous_deletion", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    with op.batch_alter_table("policy_run") as batch:
        batch.add_column(sa.Column("deletion_ids", sa.JSON(), server_default=sa.text("'[]'"), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("policy_run") as batch:
        batch.drop_column("deletion_ids")
    with op.batch_alter_table("retention_policy") as batch:
        batch.drop_column("await_previous_deletion")
        batch.drop_column("skip_foreign_active_groups")
