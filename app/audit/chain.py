"""Appending to the hash-chained audit trail, and the canonical JSON its hashes are computed over.

Canonical JSON (:func:`canonical_json`): sorted keys, no whitespace, UTF-8, RFC 3339 UTC datetimes. The
same content always yields the same bytes, on either database and in any process.

Appends are serialized on the single ``audit_head`` row, which names the newest event (its id and hash).
The head stays locked from the statement that moves it to the commit of the caller's transaction, which
writes the audit events together with the state change they describe.

An append, of one event or several, is the same on both databases up to the insert (:func:`_link`): one
``UPDATE ... RETURNING`` (:data:`ADVANCE_SQL`) moves the head's id past all the new events and returns
the head as it was, then Python numbers the events and hashes each from the previous one
(:func:`event_hash`). On PostgreSQL that UPDATE locks the row: under READ COMMITTED a locker that had to
wait updates, and returns, the row version its predecessor committed, so two appenders never chain to
the same previous hash and a rolled-back append leaves no gap. On SQLite the write transaction (BEGIN
IMMEDIATE) already excludes every other writer.

Then one more statement writes the events and the new head hash. On PostgreSQL it is one
``INSERT ... SELECT FROM unnest(...)`` of one array per column, which also stores the head hash
(:data:`INSERT_SQL`); the details go as the canonical JSON text the hash was computed from, so a big
details is rendered once. On SQLite an executemany inserts the events and an UPDATE stores the head hash.

The database accepts only the next link (the trigger of migration 0009). An append that meets a row it
did not write (or no head row) raises :class:`~app.errors.AuditChainBroken`: the caller's change is
rolled back with it, and the API answers 503 ``audit-chain-broken``, never a clash with the change.

Verifying the chain lives in :mod:`app.audit.verify`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.adapters.db.models import AuditEvent, AuditHead
from app.errors import AuditChainBroken

GENESIS_HASH = "0" * 64
HEAD_ID = 1
MISSING_HEAD = "the audit chain has no head row"
CONFLICTING_ROW = (
    "the audit chain holds rows the service did not write where the next event goes; "
    "nothing was changed (GET /v1/audit/verify names the first such row)"
)


def rfc3339(moment: datetime) -> str:
    """``2026-11-21T23:55:51.123456Z``: always UTC, always microseconds, so the text is unique."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime in audit content")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _default(value: object) -> str:
    if isinstance(value, datetime):
        return rfc3339(value)
    raise TypeError(f"{type(value).__name__} is not allowed in audit content")


def canonical_json(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_default
    )


def canonical_object(rendered: Mapping[str, str]) -> str:
    """``canonical_json`` of an object, given ``canonical_json`` of each of its values: a big object can
    be rendered in parts."""
    return "{" + ",".join(canonical_json(key) + ":" + rendered[key] for key in sorted(rendered)) + "}"


_SCALARS = frozenset((str, int, float, bool, type(None)))


def _plain(value: Any) -> bool:
    """Whether ``value`` is made only of dicts with ``str`` keys, lists and exact JSON scalars, so that it
    reads back from its JSON as an equal value (no tuples, non-string keys, enums or datetimes)."""
    kind = type(value)
    if kind is dict:
        return all(type(key) is str for key in value) and all(_plain(item) for item in value.values())
    if kind is list:
        # A column of scalars (a 10,000-partition summary) is checked without a Python step per item.
        return set(map(type, value)) <= _SCALARS or all(_plain(item) for item in value)
    return kind in _SCALARS


def normalized(value: Any) -> tuple[Any, str]:
    """``value`` as it reads back from a JSON column, and its canonical JSON: what is stored is exactly
    what was hashed. Plain JSON (the usual case) is encoded once and returned as is, not copied."""
    encoded = canonical_json(value)
    if _plain(value):
        return value, encoded
    # Not plain: non-string keys may sort differently once they are strings, so encode what reads back.
    value = json.loads(encoded)
    return value, canonical_json(value)


def chain_hash(prev_hash: str, content: dict[str, Any]) -> str:
    """SHA-256 over the previous event's hash followed by this event's canonical content."""
    return hashlib.sha256((prev_hash + canonical_json(content)).encode("utf-8")).hexdigest()


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
    # ``details`` as it reads back and its canonical JSON, when already rendered (:func:`rendered`).
    details_json: str | None = None


def rendered(new: NewEvent) -> NewEvent:
    """``new`` with its details rendered now: appending it later skips encoding them (a big summary can
    be rendered while the database works on something else)."""
    details, details_json = normalized(dict(new.details))
    return dataclasses.replace(new, details=details, details_json=details_json)


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


# Canonical JSON sorts keys: action, client_host, cluster, deletion_id, details, id, occurred_at, ...
_DETAILS_AND_ID = '"details":0,"id":0'


def hash_pieces(event: AuditEvent) -> tuple[str, str]:
    """``lead`` and ``tail`` such that ``canonical_json(event_content(event))`` is
    ``lead + canonical_json(event.details) + ',"id":' + str(event.id) + tail``, whatever the id.

    The content is rendered once with 0 for both, then cut around them: a quote inside a JSON string is
    escaped, so ``"details":0,"id":0`` can only be the keys themselves."""
    content = event_content(event)
    content["details"] = content["id"] = 0
    lead, _, tail = canonical_json(content).partition(_DETAILS_AND_ID)
    return lead + '"details":', tail


@dataclass(frozen=True)
class _Draft:
    event: AuditEvent  # without id and hashes
    details_json: str  # canonical_json(event.details): what is hashed, and stored on PostgreSQL


def _draft(new: NewEvent) -> _Draft:
    if new.details_json is None:
        details, details_json = normalized(dict(new.details))
    else:
        details, details_json = new.details, new.details_json
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


def event_hash(prev_hash: str, event: AuditEvent, details_json: str) -> str:
    """``chain_hash(prev_hash, event_content(event))``, given ``details_json``, the canonical JSON of
    ``event.details``: a big details is hashed from the text already rendered, not encoded again."""
    lead, tail = hash_pieces(event)
    digest = hashlib.sha256()
    for piece in (prev_hash, lead, details_json, ',"id":', str(event.id), tail):
        digest.update(piece.encode("utf-8"))
    return digest.hexdigest()


ADVANCE_SQL = text(
    "UPDATE audit_head SET last_event_id = last_event_id + :count WHERE id = :head_id"
    " RETURNING last_event_id, last_hash"
)


async def _link(connection: AsyncConnection, drafts: Sequence[_Draft]) -> str:
    """Move the head past ``drafts`` (locking it until the commit), give their events ids and hashes
    chained from the head's, and return the new head hash (stored by the caller, in the same transaction)."""
    head = (await connection.execute(ADVANCE_SQL, {"count": len(drafts), "head_id": HEAD_ID})).one_or_none()
    if head is None:
        raise AuditChainBroken(MISSING_HEAD + "; nothing was changed")
    first_id, prev_hash = int(head[0]) - len(drafts) + 1, str(head[1])
    for event_id, draft in enumerate(drafts, first_id):
        event = draft.event
        event.id, event.prev_hash = event_id, prev_hash
        event.hash = prev_hash = event_hash(prev_hash, event, draft.details_json)
    return prev_hash


# The events, one array per column: unnest walks them in step (WITH ORDINALITY numbers the rows from 1).
_COLUMNS = ("occurred_at", "principal", "client_host", "request_id", "action", "cluster", "deletion_id")
INSERT_SQL = text(
    """
WITH moved AS (UPDATE audit_head SET last_hash = :last_hash WHERE id = :head_id)
INSERT INTO audit_event
    (id, occurred_at, principal, client_host, request_id, action, cluster, deletion_id, details,
     prev_hash, hash)
SELECT CAST(:first_id AS bigint) + item.n - 1, item.occurred_at, item.principal, item.client_host,
       item.request_id, item.action, item.cluster, item.deletion_id, CAST(item.details AS json),
       item.prev_hash, item.hash
FROM unnest(
        CAST(:occurred_at AS timestamptz[]), CAST(:principal AS text[]), CAST(:client_host AS text[]),
        CAST(:request_id AS text[]), CAST(:action AS text[]), CAST(:cluster AS text[]),
        CAST(:deletion_id AS text[]), CAST(:details AS text[]), CAST(:prev_hash AS text[]),
        CAST(:hash AS text[])
    ) WITH ORDINALITY
    AS item(occurred_at, principal, client_host, request_id, action, cluster, deletion_id, details,
            prev_hash, hash, n)
"""
)


async def _append_postgresql(connection: AsyncConnection, drafts: Sequence[_Draft]) -> None:
    last_hash = await _link(connection, drafts)
    events = [draft.event for draft in drafts]
    params: dict[str, Any] = {column: [getattr(event, column) for event in events] for column in _COLUMNS}
    params["details"] = [draft.details_json for draft in drafts]
    params["prev_hash"] = [event.prev_hash for event in events]
    params["hash"] = [event.hash for event in events]
    params["first_id"], params["last_hash"], params["head_id"] = events[0].id, last_hash, HEAD_ID
    await connection.execute(INSERT_SQL, params)


async def _append_sqlite(connection: AsyncConnection, drafts: Sequence[_Draft]) -> None:
    last_hash = await _link(connection, drafts)
    rows = []
    for draft in drafts:
        row = {column.key: getattr(draft.event, column.key) for column in AuditEvent.__table__.columns}
        # Stored with its keys in canonical order, as on PostgreSQL (the draft keeps the caller's order).
        row["details"] = json.loads(draft.details_json)
        rows.append(row)
    await connection.execute(insert(AuditEvent), rows)
    await connection.execute(update(AuditHead).where(AuditHead.id == HEAD_ID).values(last_hash=last_hash))


async def append_events(session: AsyncSession, new_events: Sequence[NewEvent]) -> list[AuditEvent]:
    """Write ``new_events`` as the next events of the chain, in order, in ``session``'s transaction (not
    committed); on PostgreSQL in two statements, whatever their number.

    The returned events are not attached to the session; they carry the stored values.
    """
    drafts = [_draft(new) for new in new_events]
    if not drafts:
        return []
    # Core statements only: on the session's connection, without the ORM's per-statement work.
    connection = await session.connection()
    try:
        if connection.dialect.name == "postgresql":
            await _append_postgresql(connection, drafts)
        else:
            await _append_sqlite(connection, drafts)
    except IntegrityError as exc:  # a row where the next event goes, or the next-link trigger refused
        raise AuditChainBroken(CONFLICTING_ROW) from exc
    return [draft.event for draft in drafts]


async def append_event(session: AsyncSession, new: NewEvent) -> AuditEvent:
    """Write ``new`` as the next event of the chain in ``session``'s transaction (not committed).

    The returned event is not attached to the session; it carries the stored values.
    """
    return (await append_events(session, [new]))[0]
