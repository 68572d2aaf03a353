"""Audit trail response schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel


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


class AuditVerifyRead(BaseModel):
    ok: bool
    checked: int
    first_broken_id: int | None
    reason: str | None
