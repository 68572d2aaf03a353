"""Reading the audit trail: pages of events, the NDJSON export, and verifying the hash chain and its
signed checkpoints."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from datetime import datetime

from app.adapters.db.models import AuditEvent
from app.adapters.db.repositories import audit as repo
from app.adapters.db.session import read_session
from app.audit import VerifyResult, event_content, verify_chain
from app.errors import Conflict
from app.services.runtime import Runtime

EXPORT_CHUNK = 1000


async def list_events(
    runtime: Runtime,
    *,
    since: datetime | None,
    until: datetime | None,
    action: str | None,
    after_id: int | None,
    limit: int,
) -> Sequence[AuditEvent]:
    """Events in chain order after ``after_id``, optionally between two times or for one action."""
    async with read_session(runtime.sessionmaker) as session:
        return await repo.list_events(
            session, since=since, until=until, action=action, after_id=after_id, limit=limit
        )


async def export_lines(
    runtime: Runtime, *, since: datetime | None, until: datetime | None, action: str | None
) -> AsyncIterator[bytes]:
    """One JSON object per event (its hashed content plus prev_hash and hash), oldest first, up to the
    chain's head. Each chunk is read in its own short session, so a long download never holds a
    transaction open."""
    after_id: int | None = None
    while True:
        rows = await list_events(
            runtime, since=since, until=until, action=action, after_id=after_id, limit=EXPORT_CHUNK
        )
        lines = [
            json.dumps(
                {**event_content(row), "prev_hash": row.prev_hash, "hash": row.hash}, separators=(",", ":")
            )
            for row in rows
        ]
        if lines:
            yield ("\n".join(lines) + "\n").encode()
        if len(rows) < EXPORT_CHUNK:
            return
        after_id = rows[-1].id


async def verify(runtime: Runtime, checkpoint: str | None) -> VerifyResult:
    """The chain verified, with its stored checkpoints and ``checkpoint`` (kept outside the database);
    409 for a checkpoint when no signing key is configured. A malformed checkpoint raises
    ``MalformedCheckpoint``."""
    key = runtime.audit_key
    if checkpoint is not None and key is None:
        raise Conflict("This service has no audit signing key configured: it cannot check a checkpoint.")
    async with read_session(runtime.sessionmaker) as session:
        return await verify_chain(session, key=key, checkpoint=checkpoint)
