"""ORM models for consumed-data retention: consumers, their progress, retention policies and their runs.

Registered on ``models.Base`` (imported by ``app.adapters.db``), so migrations and the drift check see them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.adapters.db.models import Base, BigId


class Consumer(Base):
    """A consumer whose positions bound retention: a Spark query (push or pull) or a Kafka group."""

    __tablename__ = "consumer"
    __table_args__ = (UniqueConstraint("cluster", "name"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    cluster: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(String(16))
    checkpoint_location: Mapped[str | None] = mapped_column(Text)
    owner: Mapped[str] = mapped_column(String(512))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class ConsumerProgress(Base):
    """A consumer's position on one partition, and the batch of the query that reported it."""

    __tablename__ = "consumer_progress"
    __table_args__ = (UniqueConstraint("consumer_id", "topic", "partition"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    consumer_id: Mapped[str] = mapped_column(ForeignKey("consumer.id", ondelete="CASCADE"))
    topic: Mapped[str] = mapped_column(String(249))
    partition: Mapped[int] = mapped_column(Integer)
    offset: Mapped[int] = mapped_column(BigInteger)
    query_id: Mapped[str] = mapped_column(String(64))
    run_id: Mapped[str] = mapped_column(String(64))
    batch_id: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[datetime]


class RetentionPolicy(Base):
    """Delete what the chosen consumers have consumed, on a schedule, as the owner principal."""

    __tablename__ = "retention_policy"
    __table_args__ = (
        UniqueConstraint("cluster", "name"),
        Index("ix_retention_policy_due", "enabled", "next_run_at"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    cluster: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255))
    topics: Mapped[dict[str, Any]] = mapped_column(JSON)
    consumers: Mapped[dict[str, Any]] = mapped_column(JSON)
    min_age_seconds: Mapped[int] = mapped_column(Integer)
    min_records: Mapped[int] = mapped_column(BigInteger)
    interval_seconds: Mapped[int] = mapped_column(Integer)
    leader_only: Mapped[bool] = mapped_column(Boolean)
    enabled: Mapped[bool] = mapped_column(Boolean)
    # KIP-762's safety rules: skip topics an active group outside the policy's consumers may read; start
    # no sweep while the previous sweep's deletions are not all terminal.
    skip_foreign_active_groups: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    await_previous_deletion: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # "pending" while a widened or new policy waits for four-eyes approval (sweeps skip it), else None.
    approval_status: Mapped[str | None] = mapped_column(String(16))
    owner: Mapped[str] = mapped_column(String(512))
    owner_groups: Mapped[list[str]] = mapped_column(JSON)
    owner_host: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    last_run_at: Mapped[datetime | None]
    next_run_at: Mapped[datetime]
    # Single runner: an instance owns the policy's sweep while lease_expires_at is in the future.
    lease_owner: Mapped[str | None] = mapped_column(String(128))
    lease_expires_at: Mapped[datetime | None]


class PolicyRun(Base):
    """One sweep of a policy: what was planned, what was skipped and why, the deletion it created."""

    __tablename__ = "policy_run"
    __table_args__ = (Index("ix_policy_run_policy_id_started_at", "policy_id", "started_at"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    policy_id: Mapped[str] = mapped_column(ForeignKey("retention_policy.id", ondelete="CASCADE"))
    instance_id: Mapped[str] = mapped_column(String(128))
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    status: Mapped[str] = mapped_column(String(32))
    partitions_matched: Mapped[int] = mapped_column(Integer)
    partitions_planned: Mapped[int] = mapped_column(Integer)
    partitions_skipped: Mapped[int] = mapped_column(Integer)
    skip_counts: Mapped[dict[str, Any]] = mapped_column(JSON)
    skipped: Mapped[list[Any]] = mapped_column(JSON)
    warnings: Mapped[list[Any]] = mapped_column(JSON)
    deletion_id: Mapped[str | None] = mapped_column(String(36))
    # Every deletion of the run, in submission order (``deletion_id`` is the first).
    deletion_ids: Mapped[list[str]] = mapped_column(JSON, default=list, server_default=text("'[]'"))
    error: Mapped[str | None] = mapped_column(Text)
