"""Appending to and verifying the hash-chained audit trail.

Appends are serialized on the single ``audit_head`` row: PostgreSQL locks it with SELECT ... FOR UPDATE
(under READ COMMITTED two appenders would otherwise read the same previous hash and fork the chain);
on SQLite the write transaction (BEGIN IMMEDIATE) already excludes every other writer. The caller
commits the audit event together with the state change it describes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
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


async def _locked_head(session: AsyncSession) -> AuditHead:
    query = select(AuditHead).where(AuditHead.id == HEAD_ID).execution_options(populate_existing=True)
    if session.get_bind().dialect.name != "sqlite":
        query = query.with_for_update()
    return (await session.execute(query)).scalar_one()


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
    """Add the next event of the chain to ``session`` (flushed, not committed)."""
    head = await _locked_head(session)
    moment = occurred_at or datetime.now(UTC)
    event = AuditEvent(
        id=head.last_event_id + 1,
        # Stored at the precision it is hashed with, so a re-read hashes the same.
        occurred_at=moment.astimezone(UTC),
        principal=principal,
        client_host=client_host,
        request_id=request_id,
        action=action,
        cluster=cluster,
        deletion_id=deletion_id,
        details=normalized(dict(details)),
        prev_hash=head.last_hash,
    )
    event.hash = chain_hash(head.last_hash, event_content(event))
    head.last_event_id = event.id
    head.last_hash = event.hash
    session.add(event)
    await session.flush()
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
