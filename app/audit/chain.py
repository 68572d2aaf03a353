"""Appending to and verifying the hash-chained audit trail.

Appends are serialized on the single ``audit_head`` row: the first statement of an append is
``UPDATE audit_head SET last_event_id = last_event_id + 1 ... RETURNING``, which on PostgreSQL takes the
row lock and reads the newest committed head in one round trip (a waiting appender re-reads the row its
predecessor committed, so two appenders never chain to the same previous hash); on SQLite the write
transaction (BEGIN IMMEDIATE) already excludes every other writer. The event's id is part of its hashed
content, so the hash is computed after that; then one more statement inserts the event and stores the new
head hash (one round trip on PostgreSQL). The head lock is held from the first statement to the commit,
so fewer round trips under it means more appends per second. The caller commits the audit event together
with the state change it describes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import AuditEvent, AuditHead
from app.audit.canonical import GENESIS_HASH, chain_hash, normalized, rfc3339

HEAD_ID = 1


def event_content(event: AuditEvent) -> dict[str, Any]:
    """The hashed part of an event: everything except its own hash and the previous one."""
    return {
        "id": event.id,
        "occurred_at": rfc3339(event.occurred_at),
        "principal": event.principal,
        "client_host": event.client_host,
        "request_id": event.request_id,
        "action": event.action,
        "cluster": event.cluster,
        "deletion_id": event.deletion_id,
        "details": event.details,
    }


async def _advance_head(session: AsyncSession) -> tuple[int, str]:
    """Locks the head row and claims the next event id; returns it with the previous event's hash."""
    statement = (
        update(AuditHead)
        .where(AuditHead.id == HEAD_ID)
        .values(last_event_id=AuditHead.last_event_id + 1)
        .returning(AuditHead.last_event_id, AuditHead.last_hash)
        .execution_options(synchronize_session=False)
    )
    row = (await session.execute(statement)).one()
    return int(row[0]), str(row[1])


async def _store(session: AsyncSession, event: AuditEvent) -> None:
    values = {column.key: getattr(event, column.key) for column in AuditEvent.__table__.columns}
    new_head = (
        update(AuditHead)
        .where(AuditHead.id == HEAD_ID)
        .values(last_hash=event.hash)
        .execution_options(synchronize_session=False)
    )
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(new_head.add_cte(insert(AuditEvent).values(values).cte("appended")))
        return
    await session.execute(insert(AuditEvent).values(values))
    await session.execute(new_head)


async def append_event(
    session: AsyncSession,
    *,
    action: str,
    principal: str,
    client_host: str | None,
    request_id: str | None,
    cluster: str | None,
    deletion_id: str | None,
    details: Mapping[str, Any],
    occurred_at: datetime | None = None,
) -> AuditEvent:
    """Write the next event of the chain in ``session``'s transaction (not committed).

    The returned event is not attached to the session; it carries the stored values.
    """
    event_id, prev_hash = await _advance_head(session)
    moment = occurred_at or datetime.now(UTC)
    event = AuditEvent(
        id=event_id,
        # Stored at the precision it is hashed with, so a re-read hashes the same.
        occurred_at=moment.astimezone(UTC),
        principal=principal,
        client_host=client_host,
        request_id=request_id,
        action=action,
        cluster=cluster,
        deletion_id=deletion_id,
        details=normalized(dict(details)),
        prev_hash=prev_hash,
    )
    event.hash = chain_hash(prev_hash, event_content(event))
    await _store(session, event)
    return event


@dataclass(frozen=True)
class VerifyResult:
    ok: bool
    checked: int
    first_broken_id: int | None = None
    reason: str | None = None


def _check_link(event: AuditEvent, prev_id: int, prev_hash: str) -> str | None:
    if event.id != prev_id + 1:
        return f"events {prev_id + 1}..{event.id - 1} are missing"
    if event.prev_hash != prev_hash:
        return "prev_hash does not match the previous event's hash (events removed or reordered)"
    if chain_hash(prev_hash, event_content(event)) != event.hash:
        return "content does not match its hash (the event was modified)"
    return None


async def verify_chain(session: AsyncSession, *, chunk_size: int = 200) -> VerifyResult:
    """Walk the chain from the genesis in id order, in chunks; report the first broken link."""
    head = (await session.execute(select(AuditHead).where(AuditHead.id == HEAD_ID))).scalar_one()
    prev_id, prev_hash, checked = 0, GENESIS_HASH, 0
    while True:
        query = (
            select(AuditEvent)
            .where(AuditEvent.id > prev_id, AuditEvent.id <= head.last_event_id)
            .order_by(AuditEvent.id)
            .limit(chunk_size)
            .execution_options(populate_existing=True)
        )
        events = (await session.execute(query)).scalars().all()
        for event in events:
            reason = _check_link(event, prev_id, prev_hash)
            if reason:
                return VerifyResult(False, checked, event.id, reason)
            prev_id, prev_hash, checked = event.id, event.hash, checked + 1
        session.expunge_all()
        if len(events) < chunk_size:
            break
    if (prev_id, prev_hash) != (head.last_event_id, head.last_hash):
        reason = "the newest events are missing: the chain ends before the recorded head"
        return VerifyResult(False, checked, prev_id + 1, reason)
    return VerifyResult(True, checked)
