"""ACL bindings per cluster, the per-cluster ACL version counter, and the requester's groups on a deletion.

``acl_binding`` holds the bindings of clusters whose ``acl_source`` is ``service``; ``acl_version`` is
bumped with every change so each service instance notices changes made by another one. A deletion keeps
the requester's groups so the executor re-checks authorization with the principals the API checked.

Revision ID: 0006_acl_bindings
Revises: 0005_retention
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_acl_bindings"
down_revision: str | None = "0005_retention"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
ENTRY = (
    "cluster",
    "resource_type",
    "pattern_type",
    "resource_name",
    "principal",
    "host",
    "operation",
    "permission",
)


def upgrade() -> None:
    op.create_table(
        "acl_binding",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("cluster", sa.String(255), nullable=False),
        sa.Column("resource_type", sa.String(16), nullable=False),
        sa.Column("pattern_type", sa.String(16), nullable=False),
        sa.Column("resource_name", sa.String(512), nullable=False),
        sa.Column("principal", sa.String(512), nullable=False),
        sa.Column("host", sa.String(64), nullable=False),
        sa.Column("operation", sa.String(32), nullable=False),
        sa.Column("permission", sa.String(8), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_acl_binding")),
        sa.UniqueConstraint(*ENTRY, name="uq_acl_binding_entry"),
    )
    op.create_table(
        "acl_version",
        sa.Column("cluster", sa.String(255), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("cluster", name=op.f("pk_acl_version")),
    )
    with op.batch_alter_table("deletion") as batch:
        batch.add_column(
            sa.Column("principal_groups", sa.JSON(), server_default=sa.text("'[]'"), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("deletion") as batch:
        batch.drop_column("principal_groups")
    op.drop_table("acl_version")
    op.drop_table("acl_binding")
