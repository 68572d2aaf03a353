"""Audit trail request and response schemas."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Query
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
SinceQuery = Annotated[
    Rfc3339Time | None, Query(description="Only events at or after this time (RFC 3339 with an offset)")
]
UntilQuery = Annotated[
    Rfc3339Time | None, Query(description="Only events before this time (RFC 3339 with an offset)")
]
ActionQuery = Annotated[
    str | None, Query(max_length=64, description="Only events of this action, e.g. deletion.requested")
]

CHECKPOINT_MAX_LENGTH = 4096


class AuditEventRead(BaseModel):
    """One event of the hash-chained audit trail."""

    id: int = Field(description="The event's id: its position in the chain")
    occurred_at: datetime = Field(description="When it happened")
    principal: str = Field(description="Who did it: User:<name>, or the service itself")
    client_host: str | None = Field(description="The caller's address, when a request caused it")
    request_id: str | None = Field(description="The X-Request-ID of the request that caused it")
    action: str = Field(
        description="What happened: deletion.requested, deletion.previewed, deletion.partition_failed, "
        "acl.created, authz.denied, ..."
    )
    cluster: str | None = Field(description="The cluster it concerns")
    deletion_id: str | None = Field(description="The deletion it concerns")
    details: dict[str, Any] = Field(description="The action's own fields (partitions, offsets, reason, ...)")
    prev_hash: str = Field(description="The previous event's hash (SHA-256, hex)")
    hash: str = Field(description="SHA-256 of prev_hash and this event's canonical content, hex")


class AuditPage(BaseModel):
    """One page of audit events, oldest first."""

    items: list[AuditEventRead] = Field(description="The events of this page")
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null on the last page")


class AuditVerifyCreate(BaseModel):
    """A checkpoint kept outside the database, to verify the chain against."""

    model_config = ConfigDict(strict=True, extra="forbid")

    checkpoint: str = Field(
        min_length=1,
        max_length=CHECKPOINT_MAX_LENGTH,
        description="A compact JWS from an `audit checkpoint` log line of this service",
    )


class AuditCheckpointRead(BaseModel):
    """A signed checkpoint: the chain's head at a moment, signed by the service's key."""

    event_id: int = Field(description="The head event it names")
    event_hash: str = Field(description="That event's hash")
    signed_at: datetime = Field(description="When it was signed")
    key_id: str = Field(description="The id (kid) of the key that signed it; see GET /v1/audit/keys")
    source: Literal["stored", "supplied"] = Field(
        description="stored: the newest checkpoint in the database; supplied: the caller's"
    )


class AuditVerifyRead(BaseModel):
    """The verification of the audit trail."""

    ok: bool = Field(description="Whether the chain is intact and agrees with every checkpoint")
    checked: int = Field(description="Events whose links were checked")
    first_broken_id: int | None = Field(description="The first event where the chain breaks (null when ok)")
    reason: str | None = Field(description="How it breaks (null when ok)")
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

    keys: list[dict[str, Any]] = Field(
        description="Public keys as JWKs: the current signing key, then the retired ones (empty when no key "
        "is configured)"
    )
