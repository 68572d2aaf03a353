"""Retention policies and their runs, and the lease that lets one instance at a time sweep a policy.

A due policy is claimed with one ``UPDATE ... RETURNING`` whose WHERE repeats the lease test: on
PostgreSQL a second claimer blocked on the same row re-evaluates that test after the first commits and
finds the lease taken; on SQLite write transactions (BEGIN IMMEDIATE) are serialized anyway.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import PartitionDeletion
from app.adapters.db.retention_models import PolicyRun, RetentionPolicy
from app.domain.deletion_requests import TERMINAL_PARTITION_STATUSES


async def get_policy(session: AsyncSession, cluster: str, name: str) -> RetentionPolicy | None:
    query = select(RetentionPolicy).where(RetentionPolicy.cluster == cluster, RetentionPolicy.name == name)
    return (await session.execute(query)).scalar_one_or_none()


async def get_policy_by_id(session: AsyncSession, policy_id: str) -> RetentionPolicy | None:
    return await session.get(RetentionPolicy, policy_id)


async def list_policies(session: AsyncSession, cluster: str) -> list[RetentionPolicy]:
    query = select(RetentionPolicy).where(RetentionPolicy.cluster == cluster).order_by(RetentionPolicy.name)
    return list((await session.execute(query)).scalars())


def _free(now: datetime) -> ColumnElement[bool]:
    return or_(RetentionPolicy.lease_expires_at.is_(None), RetentionPolicy.lease_expires_at < now)


async def claim_due(
    session: AsyncSession, *, owner: str, now: datetime, lease_seconds: float, limit: int = 10
) -> list[str]:
    """Lease up to ``limit`` enabled policies whose next run is due; their ids."""
    due = and_(RetentionPolicy.enabled.is_(True), RetentionPolicy.next_run_at <= now, _free(now))
    candidates = select(RetentionPolicy.id).where(due).order_by(RetentionPolicy.next_run_at).limit(limit)
    ids = list((await session.execute(candidates)).scalars())
    if not ids:
        return []
    claim = (
        update(RetentionPolicy)
        .where(RetentionPolicy.id.in_(ids), due)
        .values(lease_owner=owner, lease_expires_at=now + timedelta(seconds=lease_seconds))
        .returning(RetentionPolicy.id)
    )
    result = await session.execute(claim, execution_options={"synchronize_session": False})
    return sorted(result.scalars())


async def renew(session: AsyncSession, policy_id: str, *, owner: str, until: datetime) -> bool:
    """Extend a held lease (a long sweep); False when the lease is no longer ``owner``'s."""
    renewal = (
        update(RetentionPolicy)
        .where(RetentionPolicy.id == policy_id, RetentionPolicy.lease_owner == owner)
        .values(lease_expires_at=until)
        .returning(RetentionPolicy.id)
    )
    result = await session.execute(renewal, execution_options={"synchronize_session": False})
    return result.first() is not None


async def unfinished_previous_deletions(session: AsyncSession, policy_id: str) -> list[str]:
    """The deletions of the policy's latest run that made any, that still have a partition not terminal."""
    latest = (
        select(PolicyRun.deletion_ids, PolicyRun.deletion_id)
        .where(PolicyRun.policy_id == policy_id, PolicyRun.deletion_id.is_not(None))
        .order_by(PolicyRun.id.desc())
        .limit(1)
    )
    row = (await session.execute(latest)).first()
    if row is None:
        return []
    ids = list(row.deletion_ids or [row.deletion_id])
    terminal = [status.value for status in TERMINAL_PARTITION_STATUSES]
    unfinished = (
        select(PartitionDeletion.deletion_id)
        .where(PartitionDeletion.deletion_id.in_(ids), PartitionDeletion.status.not_in(terminal))
        .distinct()
    )
    return sorted((await session.execute(unfinished)).scalars())


async def release(session: AsyncSession, policy_id: str, *, owner: str, now: datetime, ran: bool) -> None:
    """Give the lease back; after a run the next one is due ``interval_seconds`` later."""
    policy = await session.get(RetentionPolicy, policy_id, populate_existing=True)
    if policy is None or policy.lease_owner != owner:
        return
    policy.lease_expires_at = None
    if ran:
        policy.last_run_at = now
        policy.next_run_at = now + timedelta(seconds=policy.interval_seconds)
    await session.flush()


async def add_run(session: AsyncSession, run: PolicyRun) -> PolicyRun:
    session.add(run)
    await session.flush()
    return run


async def list_runs(
    session: AsyncSession, policy_id: str, *, before_id: int | None, limit: int
) -> list[PolicyRun]:
    """Newest first."""
    query = select(PolicyRun).where(PolicyRun.policy_id == policy_id)
    if before_id is not None:
        query = query.where(PolicyRun.id < before_id)
    return list((await session.execute(query.order_by(PolicyRun.id.desc()).limit(limit))).scalars())
