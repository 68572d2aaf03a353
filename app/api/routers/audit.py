"""/v1/audit: read the audit trail, verify its hash chain and checkpoints, and publish the checkpoint key."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query

from app.api.examples import VERIFY_EXAMPLES
from app.api.pagination import BIG_ID, decode_cursor, encode_cursor, page_limit
from app.api.problems import invalid_parameter
from app.api.routing import RuntimeDep, StrictJsonRoute
from app.audit.checkpoints import MalformedCheckpoint
from app.auth import PrincipalDep
from app.errors import FieldError, PurgeError, ValidationFailed
from app.schemas.audit import (
    CHECKPOINT_MAX_LENGTH,
    ActionQuery,
    AuditEventRead,
    AuditKeysRead,
    AuditPage,
    AuditVerifyCreate,
    AuditVerifyRead,
    SinceQuery,
    UntilQuery,
)
from app.schemas.common import PageLimit, problem_responses
from app.services import audit
from app.services.runtime import Runtime

router = APIRouter(prefix="/v1/audit", tags=["audit"], route_class=StrictJsonRoute)

CheckpointQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=CHECKPOINT_MAX_LENGTH,
        description="A checkpoint kept outside the database (compact JWS from the log) to verify against",
    ),
]


@router.get("", response_model=AuditPage, responses=problem_responses(401, 422))
async def list_audit_events(
    principal: PrincipalDep,
    runtime: RuntimeDep,
    since: SinceQuery = None,
    until: UntilQuery = None,
    action: ActionQuery = None,
    cursor: Annotated[
        str | None, Query(min_length=1, max_length=512, description="The next_cursor of the previous page")
    ] = None,
    limit: PageLimit = None,
) -> AuditPage:
    """List audit events oldest first (chain order), optionally between two times or by action."""
    size = page_limit(runtime, limit)
    after_id = decode_cursor(cursor, BIG_ID)[0] if cursor is not None else None
    rows = await audit.list_events(
        runtime, since=since, until=until, action=action, after_id=after_id, limit=size
    )
    items = [AuditEventRead.model_validate(row, from_attributes=True) for row in rows]
    return AuditPage(items=items, next_cursor=encode_cursor(rows[-1].id) if len(rows) == size else None)


async def _verify(runtime: Runtime, checkpoint: str | None, malformed: PurgeError) -> AuditVerifyRead:
    try:
        result = await audit.verify(runtime, checkpoint)
    except MalformedCheckpoint:
        raise malformed from None
    return AuditVerifyRead.of(result, checkpoints_enabled=runtime.audit_key is not None)


MALFORMED = "Not an audit checkpoint of this service (a compact JWS from an `audit checkpoint` log line)."


@router.get("/verify", response_model=AuditVerifyRead, responses=problem_responses(401, 409, 422))
async def verify_audit_chain(
    principal: PrincipalDep, runtime: RuntimeDep, checkpoint: CheckpointQuery = None
) -> AuditVerifyRead:
    """Verify the hash chain and its signed checkpoints; names the first broken link if any."""
    return await _verify(runtime, checkpoint, invalid_parameter("checkpoint", MALFORMED))


@router.post("/verify", response_model=AuditVerifyRead, responses=problem_responses(401, 409, 415, 422))
async def verify_audit_chain_against(
    body: Annotated[AuditVerifyCreate, Body(openapi_examples=VERIFY_EXAMPLES)],
    principal: PrincipalDep,
    runtime: RuntimeDep,
) -> AuditVerifyRead:
    """Verify the audit trail against a checkpoint kept outside the database, as well as the stored ones."""
    malformed = ValidationFailed(MALFORMED, errors=[FieldError("#/checkpoint", MALFORMED)])
    return await _verify(runtime, body.checkpoint, malformed)


@router.get("/keys", response_model=AuditKeysRead, responses=problem_responses(401))
async def list_audit_keys(principal: PrincipalDep, runtime: RuntimeDep) -> AuditKeysRead:
    """The public keys that verify audit checkpoints, as a JWK set: the current signing key, then the
    retired ones (empty when no key is configured)."""
    return AuditKeysRead.model_validate(runtime.signing_keys.jwks())
