"""Audit trail request and response schemas."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, BeforeValidator, ConfigDict, Field

from app.audit import VerifyResult

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})")


def _rfc3339_only(value: object) -> object:
    """Pydantic also reads epoch numbers and dates alone as datetimes; the document says date-time."""
    if isinstance(value, str) and _RFC3339.fullmatch(value):
        return value
    raise ValueError("must be an RFC 3339 date-time with an offset, e.g. 2026-11-25T12:00:00Z")


# An RFC 3339 date-time with its offset (``Z`` or ``+hh:mm``), and nothing else.
Rfc3339Time = Annotated[AwareDatetime, BeforeValidator(_rfc3339_only)]

CHECKPOINT_MAX_LENGTH = 4096


class AuditEventRead(BaseModel):
    id: int
    occurred_at: datetime
    principal: str
    client_host: str | None
    request_id: str | None
    action: str
    cluster: str | None
    deletion_id: str | None
    details: dict[str, Any]
    prev_hash: str
    hash: str


class AuditPage(BaseModel):
    items: list[AuditEventRead]
    next_cursor: str | None


class AuditVerifyCreate(BaseModel):
    """A checkpoint kept outside the database, to verify the chain against."""

    model_config = ConfigDict(strict=True, extra="forbid")

    checkpoint: str = Field(
        min_length=1,
        max_length=CHECKPOINT_MAX_LENGTH,
        description="A compact JWS from an `audit checkpoint` log line of this service",
    )


class AuditCheckpointRead(BaseModel):
    event_id: int
    event_hash: str
    signed_at: datetime
    key_id: str
    source: Literal["stored", "supplied"] = Field(
        description="stored: the newest checkpoint in the database; supplied: the caller's"
    )


class AuditVerifyRead(BaseModel):
    ok: bool
    checked: int = Field(description="Events whose links were checked")
    first_broken_id: int | None
    reason: str | None
    head_event_id: int | None = Field(description="The newest event the head row names (None: no head)")
    checkpoints_enabled: bool = Field(
        description="Whether checkpoints are signed and checked (a signing key is configured)"
    )
    checkpoints_checked: int = Field(description="Checkpoints (stored and supplied) the chain agreed with")
    checkpoint: AuditCheckpointRead | None = Field(
        description="The newest checkpoint the chain was verified against, or the one it contradicts"
    )

    @classmethod
    def of(cls, result: VerifyResult, *, checkpoints_enabled: bool) -> AuditVerifyRead:
        checkpoint = result.checkpoint
        return cls(
            ok=result.ok,
            checked=result.checked,
            first_broken_id=result.first_broken_id,
            reason=result.reason,
            head_event_id=result.head.id if result.head is not None else None,
            checkpoints_enabled=checkpoints_enabled,
            checkpoints_checked=result.checkpoints_checked,
            checkpoint=AuditCheckpointRead(
                event_id=checkpoint.event_id,
                event_hash=checkpoint.event_hash,
                signed_at=checkpoint.signed_at,
                key_id=checkpoint.key_id,
                source=result.checkpoint_source or "stored",
            )
            if checkpoint is not None
            else None,
        )


class AuditKeysRead(BaseModel):
    """A JWK set (RFC 7517) of the public keys that verify this service's audit checkpoints."""

    keys: list[dict[str, Any]]
