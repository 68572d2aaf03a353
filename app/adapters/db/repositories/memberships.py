"""The groups each principal's validated tokens last reported. Repositories flush; the caller commits."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.approval_models import Membership


async def report(session: AsyncSession, principal: str, groups: Sequence[str], now: datetime) -> None:
    """Store ``groups`` as the principal's, replacing what an earlier token reported."""
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    statement = insert(Membership).values(principal=principal, groups=list(groups), reported_at=now)
    await session.execute(
        statement.on_conflict_do_update(
            index_elements=[Membership.principal],
            set_={"groups": statement.excluded.groups, "reported_at": statement.excluded.reported_at},
        )
    )


async def reported_groups(session: AsyncSession, principal: str) -> list[str] | None:
    """The groups last reported for ``principal``; None when no token of theirs ever carried a groups
    claim."""
    groups = await session.scalar(select(Membership.groups).where(Membership.principal == principal))
    return None if groups is None else list(groups)
