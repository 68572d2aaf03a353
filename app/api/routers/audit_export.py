"""/v1/audit/export: the audit trail as NDJSON, streamed in chain order (for reports and archives)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from app.api.routing import DatabaseRoute, RuntimeDep
from app.auth import PrincipalDep
from app.schemas.audit import ActionQuery, SinceQuery, UntilQuery
from app.schemas.common import problem_responses
from app.services import audit

router = APIRouter(prefix="/v1/audit", tags=["audit"], route_class=DatabaseRoute)

NDJSON = "application/x-ndjson"


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
    since: SinceQuery = None,
    until: UntilQuery = None,
    action: ActionQuery = None,
) -> StreamingResponse:
    """Stream audit events as NDJSON in chain order, optionally between two times or for one action."""
    return StreamingResponse(
        audit.export_lines(runtime, since=since, until=until, action=action), media_type=NDJSON
    )
