"""Appending to and verifying the hash-chained audit trail.

Appends are serialized on the single ``audit_head`` row, which names the newest event (its id and hash).
The head stays locked from the statement that moves it to the commit of the caller's transaction, which
writes the audit events together with the state change they describe.

On PostgreSQL an append, of one event or several, is one statement (:data:`APPEND_SQL`): it locks the
head row (``SELECT ... FOR UPDATE``), computes each event's hash in SQL from the previous one, inserts the
events and moves the head. Under READ COMMITTED a locker that had to wait reads the row version its
predecessor committed (the UPDATE that moves the head then applies to that same locked version), so two
appenders never chain to the same previous hash and a rolled-back append leaves no gap. Python renders
each event's canonical JSON without its id as pieces (:func:`hash_pieces`) and SQL hashes
``prev_hash || lead || details || ',"id":' || id || tail``: the same bytes :func:`chain_hash` hashes,
since the id is the only part not known before the lock. One round trip under the lock, then the commit.

On SQLite the write transaction (BEGIN IMMEDIATE) already excludes every other writer: the head is moved
past all the new events with one ``UPDATE ... RETURNING``, Python computes the hashes, then one
executemany inserts the events and one more statement stores the new head hash.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import AuditEvent, AuditHead
from app.audit.canonical import GENESIS_HASH, canonical_json, chain_hash, normalized, rfc3339

HEAD_ID = 1
MISSING_HEAD = "the audit chain has no head row"


@dataclass(frozen=True)
class NewEvent:
    """An event to append: everything but its id and hashes, which the chain assigns."""

    action: str
    principal: str
    client_host: str | None
    request_id: str | None
    cluster: str | None
    deletion_id: str | None
    details: Mapping[str, Any]
    occurred_at: datetime | None = None


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


# Canonical JSON sorts keys, so the content renders as these keys, then details, then the id, then these.
_LEAD_KEYS = ("action", "client_host", "cluster", "deletion_id")
_TAIL_KEYS = ("occurred_at", "principal", "request_id")


def hash_pieces(event: AuditEvent) -> tuple[str, str]:
    """``lead`` and ``tail`` such that ``canonical_json(event_content(event))`` is
    ``lead + canonical_json(event.details) + ',"id":' + str(event.id) + tail``, whatever the id."""
    content = event_content(event)
    lead = canonical_json({key: content[key] for key in _LEAD_KEYS})
    tail = canonical_json({key: content[key] for key in _TAIL_KEYS})
    return lead[:-1] + ',"details":', "," + tail[1:]


@dataclass(frozen=True)
class _Draft:
    event: AuditEvent  # without id and hashes
    details_json: str  # canonical_json(event.details): what is hashed, and stored on PostgreSQL


def _draft(new: NewEvent) -> _Draft:
    details, details_json = normalized(dict(new.details))
    event = AuditEvent(
        # Stored at the precision it is hashed with (microseconds), so a re-read hashes the same.
        occurred_at=(new.occurred_at or datetime.now(UTC)).astimezone(UTC),
        principal=new.principal,
        client_host=new.client_host,
        request_id=new.request_id,
        action=new.action,
        cluster=new.cluster,
        deletion_id=new.deletion_id,
        details=details,
    )
    return _Draft(event, details_json)


# The hashed text of event n (1-based) is :content -> (n - 1), a jsonb array [lead, details, tail]: jsonb
# because its elements are found by index in constant time (an array of text is walked from its start).
_COLUMNS = ("occurred_at", "principal", "client_host", "request_id", "action", "cluster", "deletion_id")
APPEND_SQL = text(
    """
WITH RECURSIVE
head AS (SELECT last_event_id, last_hash FROM audit_head WHERE id = :head_id FOR UPDATE),
chain (n, id, prev_hash, hash) AS (
    SELECT 0, last_event_id, CAST(NULL AS text), CAST(last_hash AS text) FROM head
    UNION ALL
    SELECT n + 1, id + 1, hash, encode(sha256(convert_to(
        hash || (CAST(:content AS jsonb) -> n ->> 0) || (CAST(:content AS jsonb) -> n ->> 1)
        || ',"id":' || CAST(id + 1 AS text) || (CAST(:content AS jsonb) -> n ->> 2),
        'UTF8')), 'hex')
    FROM chain WHERE n < :count
),
moved AS (
    UPDATE audit_head SET last_event_id = chain.id, last_hash = chain.hash
    FROM chain WHERE audit_head.id = :head_id AND chain.n = :count
)
INSERT INTO audit_event
    (id, occurred_at, principal, client_host, request_id, action, cluster, deletion_id, details,
     prev_hash, hash)
SELECT chain.id, item.occurred_at, item.principal, item.client_host, item.request_id, item.action,
       item.cluster, item.deletion_id, CAST(CAST(:content AS jsonb) -> (chain.n - 1) ->> 1 AS json),
       chain.prev_hash, chain.hash
FROM unnest(
        CAST(:occurred_at AS timestamptz[]), CAST(:principal AS text[]), CAST(:client_host AS text[]),
        CAST(:request_id AS text[]), CAST(:action AS text[]), CAST(:cluster AS text[]),
        CAST(:deletion_id AS text[])
    ) WITH ORDINALITY
    AS item(occurred_at, principal, client_host, request_id, action, cluster, deletion_id, n)
JOIN chain ON chain.n = item.n
RETURNING id, prev_hash, hash
"""
)


def _hashed_text(draft: _Draft) -> tuple[str, str, str]:
    lead, tail = hash_pieces(draft.event)
    return lead, draft.details_json, tail


async def _append_postgresql(session: AsyncSession, drafts: Sequence[_Draft]) -> None:
    events = [draft.event for draft in drafts]
    params: dict[str, Any] = {column: [getattr(event, column) for event in events] for column in _COLUMNS}
    params["content"] = json.dumps([_hashed_text(draft) for draft in drafts], ensure_ascii=False)
    params["count"], params["head_id"] = len(drafts), HEAD_ID
    rows = sorted((await session.execute(APPEND_SQL, params)).all())
    if len(rows) != len(events):
        raise RuntimeError(MISSING_HEAD)
    for event, (event_id, prev_hash, hash_) in zip(events, rows, strict=True):
        event.id, event.prev_hash, event.hash = int(event_id), str(prev_hash), str(hash_)


async def _append_sqlite(session: AsyncSession, drafts: Sequence[_Draft]) -> None:
    advance = (
        update(AuditHead)
        .where(AuditHead.id == HEAD_ID)
        .values(last_event_id=AuditHead.last_event_id + len(drafts))
        .returning(AuditHead.last_event_id, AuditHead.last_hash)
        .execution_options(synchronize_session=False)
    )
    head = (await session.execute(advance)).one_or_none()
    if head is None:
        raise RuntimeError(MISSING_HEAD)
    first_id, prev_hash = int(head[0]) - len(drafts) + 1, str(head[1])
    rows = []
    for offset, draft in enumerate(drafts):
        event = draft.event
        event.id, event.prev_hash = first_id + offset, prev_hash
        event.hash = prev_hash = chain_hash(prev_hash, event_content(event))
        row = {column.key: getattr(event, column.key) for column in AuditEvent.__table__.columns}
        # Stored with its keys in canonical order, as on PostgreSQL (the draft keeps the caller's order).
        row["details"] = json.loads(draft.details_json)
        rows.append(row)
    await session.execute(insert(AuditEvent), rows)
    new_head = update(AuditHead).where(AuditHead.id == HEAD_ID).values(last_hash=prev_hash)
    await session.execute(new_head.execution_options(synchronize_session=False))


async def append_events(session: AsyncSession, new_events: Sequence[NewEvent]) -> list[AuditEvent]:
    """Write ``new_events`` as the next events of the chain, in order, in ``session``'s transaction (not
    committed); on PostgreSQL in one statement.

    The returned events are not attached to the session; they carry the stored values.
    """
    drafts = [_draft(new) for new in new_events]
    if not drafts:
        return []
    if session.get_bind().dialect.name == "postgresql":
        await _append_postgresql(session, drafts)
    else:
        await _append_sqlite(session, drafts)
    return [draft.event for draft in drafts]


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
    new = NewEvent(action, principal, client_host, request_id, cluster, deletion_id, details, occurred_at)
    return (await append_events(session, [new]))[0]


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
