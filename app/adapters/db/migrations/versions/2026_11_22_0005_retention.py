"""Consumed-data retention: consumers (Spark queries and Kafka groups), their reported progress, retention
policies (with a lease so one instance sweeps a policy at a time) and the record of each sweep.

Revision ID: 0005_retention
Revises: 0003_offset_spec
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_retention"
down_revision: str | None = "0003_offset_spec"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _time(name: str, nullable: bool = False) -> sa.Column[sa.DateTime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "consumer",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("cluster", sa.String(255), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("checkpoint_location", sa.Text(), nullable=True),
        sa.Column("owner", sa.String(512), nullable=False),
        _time("created_at"),
        _time("updated_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_consumer")),
        sa.UniqueConstraint("cluster", "name", name=op.f("uq_consumer_cluster_name")),
    )
    op.create_table(
        "consumer_progress",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("consumer_id", sa.String(36), nullable=False),
        sa.Column("topic", sa.String(249), nullable=False),
        sa.Column("partition", sa.Integer(), nullable=False),
        sa.Column("offset", sa.BigInteger(), nullable=False),
        sa.Column("query_id", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("batch_id", sa.BigInteger(), nullable=False),
        _time("updated_at"),
        sa.ForeignKeyConstraint(
            ["consumer_id"],
            ["consumer.id"],
            name=op.f("fk_consumer_progress_consumer_id_consumer"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_consumer_progress")),
        sa.UniqueConstraint(
            "consumer_id", "topic", "partition", name=op.f("uq_consumer_progress_consumer_id_topic_partition")
        ),
    )
    op.create_table(
        "retention_policy",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("cluster", sa.String(255), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("topics", sa.JSON(), nullable=False),
        sa.Column("consumers", sa.JSON(), nullable=False),
        sa.Column("min_age_seconds", sa.Integer(), nullable=False),
        sa.Column("min_records", sa.BigInteger(), nullable=False),
        sa.Column("interval_seconds", sa.Integer(), nullable=False),
        sa.Column("leader_only", sa.Boolean(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("owner", sa.String(512), nullable=False),
        sa.Column("owner_groups", sa.JSON(), nullable=False),
        sa.Column("owner_host", sa.String(64), nullable=False),
        _time("created_at"),
        _time("updated_at"),
        _time("last_run_at", nullable=True),
        _time("next_run_at"),
        sa.Column("lease_owner", sa.String(128), nullable=True),
        _time("lease_expires_at", nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_retention_policy")),
        sa.UniqueConstraint("cluster", "name", name=op.f("uq_retention_policy_cluster_name")),
    )
    op.create_index("ix_retention_policy_due", "retention_policy", ["enabled", "next_run_at"])
    op.create_table(
        "policy_run",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("policy_id", sa.String(36), nullable=False),
        sa.Column("instance_id", sa.String(128), nullable=False),
        _time("started_at"),
        _time("finished_at", nullable=True),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("partitions_matched", sa.Integer(), nullable=False),
        sa.Column("partitions_planned", sa.Integer(), nullable=False),
        sa.Column("partitions_skipped", sa.Integer(), nullable=False),
        sa.Column("skip_counts", sa.JSON(), nullable=False),
        sa.Column("skipped", sa.JSON(), nullable=False),
        sa.Column("warnings", sa.JSON(), nullable=False),
        sa.Column("deletion_id", sa.String(36), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["policy_id"],
            ["retention_policy.id"],
            name=op.f("fk_policy_run_policy_id_retention_policy"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_policy_run")),
    )
    op.create_index("ix_policy_run_policy_id_started_at", "policy_run", ["policy_id", "started_at"])


def downgrade() -> None:
    op.drop_index("ix_policy_run_policy_id_started_at", table_name="policy_run")
    op.drop_table("policy_run")
    op.drop_index("ix_retention_policy_due", table_name="retention_policy")
    op.drop_table("retention_policy")
    op.drop_table("consumer_progress")
    op.drop_table("consumer")
