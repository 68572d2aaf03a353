"""/v1/audit/export: the audit trail as NDJSON, streamed in chain order (for reports and archives)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from app.adapters.db.repositories import audit as repo
from app.adapters.db.session import read_session
from app.api.deps import RuntimeDep
from app.audit import event_content
from app.auth import PrincipalDep
from app.schemas.audit import Rfc3339Time
from app.schemas.common import problem_responses
from app.services.runtime import Runtime

router = APIRouter(prefix="/v1/audit", tags=["audit"])

CHUNK = 1000
NDJSON = "application/x-ndjson"


async def export_lines(
    runtime: Runtime, *, since: datetime | None, until: datetime | None, action: str | None
) -> AsyncIterator[bytes]:
    """One JSON object per event (its hashed content plus prev_hash and hash), oldest first, up to the
    chain's head. Each chunk is read in its own short session, so a long download never holds a
    transaction open."""
    after_id: int | None = None
    while True:
        async with read_session(runtime.sessionmaker) as session:
            rows = await repo.list_events(
                session, since=since, until=until, action=action, after_id=after_id, limit=CHUNK
            )
        lines = [
            json.dumps(
                {**event_content(row), "prev_hash": row.prev_hash, "hash": row.hash}, separators=(",", ":")
            )
            for row in rows
        ]
        if lines:
            yield ("\n".join(lines) + "\n").encode()
        if len(rows) < CHUNK:
            return
        after_id = rows[-1].id


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={
        200: {"content": {NDJSON: {}}, "description": "One audit event per line"},
        **problem_responses(401, 422),
    },
)
async def export_audit_events(
    principal: PrincipalDep,
    runtime: RuntimeDep,
    since: Rfc3339Time | None = None,
    until: Rfc3339Time | None = None,
    action: Annotated[str | None, Query(max_length=64)] = None,
) -> StreamingResponse:
    """Stream audit events as NDJSON in chain order, optionally between two times or for one action."""
    return StreamingResponse(
        export_lines(runtime, since=since, until=until, action=action), media_type=NDJSON
    )
