"""/v1/audit: read the audit trail and verify its hash chain."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import AwareDatetime

from app.adapters.db.repositories import audit as repo
from app.api.deps import ServicesDep, SessionDep
from app.api.pagination import BIG_ID, decode_cursor, encode_cursor
from app.api.schemas.audit import AuditEventRead, AuditPage, AuditVerifyRead
from app.api.schemas.common import PageLimit, problem_responses
from app.api.views import page_limit
from app.audit import verify_chain
from app.auth import PrincipalDep

router = APIRouter(prefix="/v1/audit", tags=["audit"])


@router.get("", response_model=AuditPage, responses=problem_responses(401, 422))
async def list_audit_events(
    principal: PrincipalDep,
    services: ServicesDep,
    session: SessionDep,
    since: AwareDatetime | None = None,
    action: Annotated[str | None, Query(max_length=64)] = None,
    cursor: Annotated[str | None, Query(min_length=1, max_length=512)] = None,
    limit: PageLimit = None,
) -> AuditPage:
    """List audit events oldest first (chain order), optionally since a time or by action."""
    size = page_limit(services, limit)
    after_id = decode_cursor(cursor, BIG_ID)[0] if cursor is not None else None
    rows = await repo.list_events(session, since=since, action=action, after_id=after_id, limit=size)
    items = [AuditEventRead.model_validate(row, from_attributes=True) for row in rows]
    return AuditPage(items=items, next_cursor=encode_cursor(rows[-1].id) if len(rows) == size else None)


@router.get("/verify", response_model=AuditVerifyRead, responses=problem_responses(401))
async def verify_audit_chain(principal: PrincipalDep, session: SessionDep) -> AuditVerifyRead:
    """Verify the whole hash chain; names the first broken link if any."""
    result = await verify_chain(session)
    return AuditVerifyRead(
        ok=result.ok, checked=result.checked, first_broken_id=result.first_broken_id, reason=result.reason
    )
