"""ORM models of four-eyes approval: a cluster's approval rules, the approval requests of protected
deletions and retention policies, and each approver's decision.

Registered on ``models.Base`` (imported by ``app.adapters.db``), so migrations and the drift check see them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.adapters.db.models import Base, BigId


class ApprovalRule(Base):
    """Which topics of a cluster need whose approval before records in them are deleted."""

    __tablename__ = "approval_rule"
    __table_args__ = (UniqueConstraint("cluster", "name"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    cluster: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255))
    topics: Mapped[dict[str, Any]] = mapped_column(JSON)
    approvers: Mapped[list[str]] = mapped_column(JSON)
    required_approvals: Mapped[int] = mapped_column(Integer)
    expires_after_seconds: Mapped[int] = mapped_column(Integer)
    applies_to_retention: Mapped[bool] = mapped_column(Boolean)
    created_by: Mapped[str] = mapped_column(String(512))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class ApprovalRequest(Base):
    """What a protected deletion or retention policy waits for: the rules that matched (as they were),
    how many approvals it needs, until when, and for a deletion the preview approvers approve."""

    __tablename__ = "approval_request"
    __table_args__ = (
        UniqueConstraint("subject_kind", "subject_id", "round"),
        Index("ix_approval_request_status_expires_at", "status", "expires_at"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    cluster: Mapped[str] = mapped_column(String(255))
    subject_kind: Mapped[str] = mapped_column(String(16))
    subject_id: Mapped[str] = mapped_column(String(36))
    # A policy asks again each time it is widened: one request per round.
    round: Mapped[int] = mapped_column(Integer, default=1)
    subject_name: Mapped[str] = mapped_column(String(255))
    requester: Mapped[str] = mapped_column(String(512))
    requester_groups: Mapped[list[str]] = mapped_column(JSON)
    topics: Mapped[list[str]] = mapped_column(JSON)
    rules: Mapped[list[Any]] = mapped_column(JSON)
    required_approvals: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    preview: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    decided_at: Mapped[datetime | None]


class ApprovalDecision(Base):
    """One principal's approval or rejection of a request; each principal decides once."""

    __tablename__ = "approval_decision"
    __table_args__ = (UniqueConstraint("request_id", "principal"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    request_id: Mapped[int] = mapped_column(ForeignKey("approval_request.id", ondelete="CASCADE"))
    principal: Mapped[str] = mapped_column(String(512))
    # The approver principals of the rules the caller approved as (their user, or a group of theirs).
    approved_as: Mapped[list[str]] = mapped_column(JSON)
    decision: Mapped[str] = mapped_column(String(16))
    comment: Mapped[str] = mapped_column(Text)
    decided_at: Mapped[datetime]
