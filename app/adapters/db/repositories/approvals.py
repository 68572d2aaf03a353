"""Queries on approval rules, approval requests and decisions. Repositories flush; the caller commits."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Select, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from app.adapters.db.approval_models import ApprovalDecision, ApprovalRequest, ApprovalRule
from app.adapters.db.models import PartitionDeletion
from app.domain import approvals as domain
from app.domain.approvals import ApprovalStatus, Exemption, SubjectKind
from app.domain.deletion_requests import PartitionStatus
from app.domain.topic_patterns import TopicSelector


async def get_rule(session: AsyncSession, cluster: str, name: str) -> ApprovalRule | None:
    query = select(ApprovalRule).where(ApprovalRule.cluster == cluster, ApprovalRule.name == name)
    return (await session.execute(query)).scalar_one_or_none()


def _rules_of(cluster: str) -> Select[ApprovalRule]:
    return select(ApprovalRule).where(ApprovalRule.cluster == cluster).order_by(ApprovalRule.name)


async def list_rules(session: AsyncSession, cluster: str) -> list[ApprovalRule]:
    return list((await session.execute(_rules_of(cluster))).scalars())


def read_rules(session: Session, cluster: str) -> list[domain.ApprovalRule]:
    """The cluster's rules as the domain matches them, for a synchronous read
    (``app.adapters.db.session.run_read``)."""
    return [_domain_rule(rule) for rule in session.execute(_rules_of(cluster)).scalars()]


async def cluster_rules(session: AsyncSession, cluster: str) -> list[domain.ApprovalRule]:
    """The cluster's rules as the domain matches them."""
    return [_domain_rule(rule) for rule in (await session.execute(_rules_of(cluster))).scalars()]


def _domain_rule(rule: ApprovalRule) -> domain.ApprovalRule:
    return domain.ApprovalRule(
        rule.name,
        TopicSelector.of(rule.topics),
        tuple(rule.approvers),
        rule.required_approvals,
        rule.expires_after_seconds,
        frozenset(Exemption(way) for way in rule.exemptions),
    )


async def add(session: AsyncSession, row: ApprovalRule | ApprovalRequest | ApprovalDecision) -> None:
    session.add(row)
    await session.flush()


async def delete_rule(session: AsyncSession, rule: ApprovalRule) -> None:
    await session.delete(rule)
    await session.flush()


async def latest_request(
    session: AsyncSession, kind: SubjectKind, subject_id: str, *, for_update: bool = False
) -> ApprovalRequest | None:
    """The subject's newest approval request (a policy has one per widening)."""
    query = (
        select(ApprovalRequest)
        .where(ApprovalRequest.subject_kind == kind.value, ApprovalRequest.subject_id == subject_id)
        .order_by(ApprovalRequest.round.desc())
        .limit(1)
    )
    if for_update:
        query = query.with_for_update()
    return (await session.execute(query)).scalar_one_or_none()


async def requests_in(session: AsyncSession, status: str, *, limit: int = 1000) -> list[ApprovalRequest]:
    """Requests in ``status``, oldest first (at most ``limit``, the newest of them)."""
    query = (
        select(ApprovalRequest)
        .where(ApprovalRequest.status == status)
        .order_by(ApprovalRequest.id.desc())
        .limit(limit)
    )
    return sorted((await session.execute(query)).scalars(), key=lambda request: request.id)


async def overdue_requests(
    session: AsyncSession, now: datetime, *, for_update: bool = False
) -> list[ApprovalRequest]:
    """Pending requests whose time ran out (at most 100). ``for_update``: locked, so a decision being
    recorded on one (it locks the request too) either commits first, and the request is no longer
    pending when read again, or waits for the expiry."""
    query = (
        select(ApprovalRequest)
        .where(ApprovalRequest.status == ApprovalStatus.PENDING.value, ApprovalRequest.expires_at <= now)
        .order_by(ApprovalRequest.id)
        .limit(100)
    )
    if for_update:
        query = query.with_for_update()
    return list((await session.execute(query)).scalars())


async def decisions(session: AsyncSession, request_ids: Sequence[int]) -> list[ApprovalDecision]:
    if not request_ids:
        return []
    query = (
        select(ApprovalDecision)
        .where(ApprovalDecision.request_id.in_(list(request_ids)))
        .order_by(ApprovalDecision.id)
    )
    return list((await session.execute(query)).scalars())


async def hold_partitions(session: AsyncSession, deletion_id: str, now: datetime) -> None:
    """The new deletion's partitions (stored pending, unclaimed) wait for approval."""
    await session.execute(
        update(PartitionDeletion)
        .where(PartitionDeletion.deletion_id == deletion_id)
        .values(status=PartitionStatus.AWAITING_APPROVAL.value, updated_at=now)
        .execution_options(synchronize_session=False)
    )


async def release_partitions(session: AsyncSession, deletion_id: str, now: datetime) -> int:
    """Approved: the waiting partitions become pending and due now; how many."""
    result = await session.execute(
        update(PartitionDeletion)
        .where(
            PartitionDeletion.deletion_id == deletion_id,
            PartitionDeletion.status == PartitionStatus.AWAITING_APPROVAL.value,
        )
        .values(status=PartitionStatus.PENDING.value, next_attempt_at=now, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return int(getattr(result, "rowcount", 0))


async def drop_partitions(session: AsyncSession, deletion_id: str, now: datetime) -> int:
    """Rejected or expired: the waiting partitions are cancelled; how many."""
    result = await session.execute(
        update(PartitionDeletion)
        .where(
            PartitionDeletion.deletion_id == deletion_id,
            PartitionDeletion.status == PartitionStatus.AWAITING_APPROVAL.value,
        )
        .values(status=PartitionStatus.CANCELLED.value, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return int(getattr(result, "rowcount", 0))
