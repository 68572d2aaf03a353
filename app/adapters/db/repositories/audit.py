"""Queries on the audit trail and its checkpoints (appending and verifying live in ``app.audit``).

Reads bound by the head take it in the same statement (a subquery), so they see one snapshot: an event
committed meanwhile comes with the head that names it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import ScalarSelect, func, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import AuditCheckpoint, AuditEvent, AuditHead

HEAD_ID = 1


def _head_event_id() -> ScalarSelect[int]:
    return select(AuditHead.last_event_id).where(AuditHead.id == HEAD_ID).scalar_subquery()


async def list_events(
    session: AsyncSession,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    action: str | None = None,
    after_id: int | None = None,
    limit: int,
) -> list[AuditEvent]:
    """Oldest first (the chain's order), starting after event ``after_id``; only the chain's events, up
    to its head (a row past the head was not written by the service, see ``first_row_off_chain``)."""
    query = select(AuditEvent).where(AuditEvent.id >= 1, AuditEvent.id <= _head_event_id())
    if since is not None:
        query = query.where(AuditEvent.occurred_at >= since)
    if until is not None:
        query = query.where(AuditEvent.occurred_at < until)
    if action is not None:
        query = query.where(AuditEvent.action == action)
    if after_id is not None:
        query = query.where(AuditEvent.id > after_id)
    query = query.order_by(AuditEvent.id).limit(limit)
    return list((await session.execute(query)).scalars())


async def read_head(session: AsyncSession) -> tuple[int, str] | None:
    """The head's ``(last_event_id, last_hash)``, or None when its row is gone."""
    query = select(AuditHead.last_event_id, AuditHead.last_hash).where(AuditHead.id == HEAD_ID)
    row = (await session.execute(query)).one_or_none()
    return (int(row[0]), str(row[1])) if row is not None else None


async def chain_events(
    session: AsyncSession, *, after_id: int, until_id: int, limit: int
) -> list[AuditEvent]:
    """Events ``after_id < id <= until_id`` in id order, read afresh (for verification)."""
    query = (
        select(AuditEvent)
        .where(AuditEvent.id > after_id, AuditEvent.id <= until_id)
        .order_by(AuditEvent.id)
        .limit(limit)
        .execution_options(populate_existing=True)
    )
    return list((await session.execute(query)).scalars().all())


async def first_row_off_chain(session: AsyncSession) -> int | None:
    """The lowest id of a row past the head (or below 1): rows the service's appends never wrote."""
    # One statement (one snapshot with the head), each part a lookup at one end of the primary key.
    below = select(func.min(AuditEvent.id)).where(AuditEvent.id < 1).scalar_subquery()
    past = select(func.min(AuditEvent.id)).where(AuditEvent.id > func.coalesce(_head_event_id(), 0))
    query = select(func.coalesce(below, past.scalar_subquery()))
    value = (await session.execute(query)).scalar_one_or_none()
    return int(value) if value is not None else None


async def event_hashes(session: AsyncSession, ids: Iterable[int]) -> dict[int, str]:
    query = select(AuditEvent.id, AuditEvent.hash).where(AuditEvent.id.in_(list(ids)))
    return {int(row[0]): str(row[1]) for row in await session.execute(query)}


async def list_checkpoints(
    session: AsyncSession, *, after_event_id: int, until_event_id: int, limit: int
) -> list[AuditCheckpoint]:
    """Stored checkpoints by event id, from after ``after_event_id`` up to ``until_event_id``."""
    query = (
        select(AuditCheckpoint)
        .where(AuditCheckpoint.event_id > after_event_id, AuditCheckpoint.event_id <= until_event_id)
        .order_by(AuditCheckpoint.event_id)
        .limit(limit)
    )
    return list((await session.execute(query)).scalars())


async def checkpoint_past_head(session: AsyncSession) -> AuditCheckpoint | None:
    """The newest stored checkpoint naming an event past the head, as of one snapshot: a checkpoint is
    stored only once the head it names is committed, so there is none unless events were removed."""
    head = func.coalesce(_head_event_id(), 0)
    query = (
        select(AuditCheckpoint)
        .where(AuditCheckpoint.event_id > head)
        .order_by(AuditCheckpoint.event_id.desc())
        .limit(1)
    )
    return (await session.execute(query)).scalar_one_or_none()


async def last_checkpoint(session: AsyncSession) -> AuditCheckpoint | None:
    query = select(AuditCheckpoint).order_by(AuditCheckpoint.event_id.desc()).limit(1)
    return (await session.execute(query)).scalar_one_or_none()


async def add_checkpoint(
    session: AsyncSession, *, event_id: int, event_hash: str, signed_at: datetime, key_id: str, jws: str
) -> bool:
    """Store a checkpoint unless one for ``event_id`` exists (another instance signed it first)."""
    values = {
        "event_id": event_id,
        "event_hash": event_hash,
        "signed_at": signed_at,
        "key_id": key_id,
        "jws": jws,
    }
    dialect = session.get_bind().dialect.name
    insert = postgresql_insert if dialect == "postgresql" else sqlite_insert
    statement = insert(AuditCheckpoint).values(values).on_conflict_do_nothing(index_elements=["event_id"])
    result = await session.execute(statement.returning(AuditCheckpoint.id))
    return result.first() is not None
