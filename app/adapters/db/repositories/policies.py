"""Retention policies and their runs, and the lease that lets one instance at a time sweep a policy.

A due policy is claimed with one ``UPDATE ... RETURNING`` whose WHERE repeats the lease test: on
PostgreSQL a second claimer blocked on the same row re-evaluates that test after the first commits and
finds the lease taken; on SQLite write transactions (BEGIN IMMEDIATE) are serialized anyway.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.retention_models import PolicyRun, RetentionPolicy


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
