"""ORM models of four-eyes approval: a cluster's approval rules, the approval requests of protected
deletions and retention policies, each approver's decision, and the groups the identity provider last
reported for each principal.

Registered on ``models.Base`` (imported by ``app.adapters.db``), so migrations and the drift check see them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, UniqueConstraint, text
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
    # The ways of deleting (``app.domain.approvals.Exemption``) an administrator exempted it from.
    exemptions: Mapped[list[str]] = mapped_column(JSON, default=list, server_default=text("'[]'"))
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


class Membership(Base):
    """The groups a principal's validated token last carried (its groups claim): who the requester is
    known to be with when an approver decides, whatever token the requester asked with."""

    __tablename__ = "membership"

    principal: Mapped[str] = mapped_column(String(512), primary_key=True)
    groups: Mapped[list[str]] = mapped_column(JSON)
    reported_at: Mapped[datetime]
