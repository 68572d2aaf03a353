"""The executor's backlog per cluster, for the ``/metrics`` gauges: unfinished partitions, in flight (an
executor holds their lease: being sent or written back) or pending (waiting for a claim, a retry's
backoff included), and when the oldest of each was accepted."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import DELETIONS, PD
from app.adapters.db.repositories.claims import ACTIVE_DELETION, CLAIMABLE


class BacklogRow(NamedTuple):
    cluster: str
    in_flight: bool
    partitions: int
    oldest_created_at: datetime


async def backlog(session: AsyncSession, now: datetime) -> list[BacklogRow]:
    """Counted through the active deletions (indexed by status) and their partitions (indexed by
    deletion): the cost follows the backlog, not the table's history."""
    leased = case((PD.c.lease_expires_at > now, True), else_=False)
    query = (
        select(DELETIONS.c.cluster, leased, func.count(), func.min(DELETIONS.c.created_at))
        .select_from(DELETIONS.join(PD, PD.c.deletion_id == DELETIONS.c.id))
        .where(
            DELETIONS.c.status.in_(ACTIVE_DELETION),
            PD.c.status.in_([status.value for status in CLAIMABLE]),
        )
        .group_by(DELETIONS.c.cluster, leased)
    )
    return [BacklogRow(c, bool(f), n, oldest) for c, f, n, oldest in (await session.execute(query)).all()]
