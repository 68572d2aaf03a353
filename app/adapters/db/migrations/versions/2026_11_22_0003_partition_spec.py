"""Keep the offset spec of each partition (offset, before, committed_by, to) beside its resolved offset.

Revision ID: 0003_offset_spec
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_offset_spec"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("partition_deletion") as batch:
        batch.add_column(sa.Column("spec", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("partition_deletion") as batch:
        batch.drop_column("spec")
