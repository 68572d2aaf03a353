"""Let the executor's write-back update partition rows in place (PostgreSQL HOT updates).

A write-back changes every partition row of a batch (status, offsets, lease, next attempt). While any of
those columns was indexed (the claim index on ``status, next_attempt_at``) each changed row needed a new
entry in every index of the table, the unique ``(deletion_id, topic, partition)`` one included: at
10,000 partitions about half of the write-back's database time. Without it, and with room left on each
page for the new row versions (``fillfactor``), PostgreSQL updates the rows on their page and leaves the
indexes alone. Due partitions are found through the deletions still active instead
(``ix_deletion_status``, then the partitions' ``(deletion_id, topic, partition)`` index).

Revision ID: 0007_partition_hot_updates
Revises: 0006_acl_bindings
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007_partition_hot_updates"
down_revision: str | None = "0006_acl_bindings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FILLFACTOR = 50


def upgrade() -> None:
    op.drop_index("ix_partition_deletion_claim", table_name="partition_deletion")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE partition_deletion SET (fillfactor = {FILLFACTOR})")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE partition_deletion RESET (fillfactor)")
    op.create_index("ix_partition_deletion_claim", "partition_deletion", ["status", "next_attempt_at"])
