"""Cheaper writes of partition rows: updated in place, inserted without a per-row foreign key check.

A write-back changes every partition row of a batch (status, offsets, lease, next attempt). While any of
those columns was indexed (the claim index on ``status, next_attempt_at``) each changed row needed a new
entry in every index of the table, the unique ``(deletion_id, topic, partition)`` one included: at
10,000 partitions about half of the write-back's database time. Without it, and with half of each page
left free for the new row versions (``fillfactor``), PostgreSQL updates the rows on their page and
leaves the indexes alone (HOT updates). Due partitions are found through the deletions still active
instead (``ix_deletion_status``, then the partitions' ``(deletion_id, topic, partition)`` index).

The foreign key from ``partition_deletion.deletion_id`` to ``deletion`` is dropped: PostgreSQL checks it
with one query per inserted row, half of the time of inserting a 10,000-partition deletion. Partition
rows are written only by the statement (SQLite: the transaction) that inserts their deletion, from that
deletion's own id, and deletions are never deleted (the audit trail names them).

Revision ID: 0007_partition_write_path
Revises: 0006_acl_bindings
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007_partition_write_path"
down_revision: str | None = "0006_acl_bindings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FILLFACTOR = 50
FOREIGN_KEY = "fk_partition_deletion_deletion_id_deletion"


def upgrade() -> None:
    op.drop_index("ix_partition_deletion_claim", table_name="partition_deletion")
    with op.batch_alter_table("partition_deletion") as batch:
        batch.drop_constraint(FOREIGN_KEY, type_="foreignkey")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE partition_deletion SET (fillfactor = {FILLFACTOR})")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE partition_deletion RESET (fillfactor)")
    with op.batch_alter_table("partition_deletion") as batch:
        batch.create_foreign_key(FOREIGN_KEY, "deletion", ["deletion_id"], ["id"], ondelete="CASCADE")
    op.create_index("ix_partition_deletion_claim", "partition_deletion", ["status", "next_attempt_at"])
