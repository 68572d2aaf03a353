"""Opaque cursors: URL-safe base64 of a small JSON array (the sort key of the last item returned).

A cursor only ever names an item its caller was shown (a list the caller sees only part of builds it
from the visible items), so decoding one tells the caller nothing new. Cursors come back from clients,
so every value is checked before it reaches a query: integers within the column's range, strings
without control characters (PostgreSQL refuses NUL in text), the right number and types of values.
``page_limit`` is the page size a request asks for, within the configured limits.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row

from app.api.problems import invalid_parameter
from app.errors import ValidationFailed
from app.schemas.deletions import PartitionRead
from app.services.runtime import Runtime
from app.text import has_control_character

MAX_CURSOR_LENGTH = 512


@dataclass(frozen=True, slots=True)
class IntRange:
    """An integer key of a cursor, within its column's range."""

    low: int
    high: int


BIG_ID = IntRange(0, 2**63 - 1)  # BIGINT identity columns
PARTITION = IntRange(0, 2**31 - 1)  # INTEGER partition numbers
CursorField = type | IntRange


def encode_cursor(*key: Any) -> str:
    raw = json.dumps(list(key), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, *fields: CursorField) -> tuple[Any, ...]:
    """The key encoded in ``cursor``, checked against ``fields`` (a type, or an integer range); 422 for
    anything else."""
    try:
        if len(cursor) > MAX_CURSOR_LENGTH:
            raise ValueError
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        key = json.loads(raw)
    except (ValueError, binascii.Error):
        raise _invalid() from None
    if not isinstance(key, list) or len(key) != len(fields):
        raise _invalid()
    if not all(_fits(value, field) for value, field in zip(key, fields, strict=True)):
        raise _invalid()
    return tuple(key)


def _fits(value: Any, field: CursorField) -> bool:
    if isinstance(field, IntRange):
        return type(value) is int and field.low <= value <= field.high
    if type(value) is not field:
        return False
    return not (isinstance(value, str) and has_control_character(value))


def cursor_time(text: str) -> datetime:
    """A timestamp taken from a cursor (ISO 8601 with offset)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise _invalid() from None
    if moment.tzinfo is None:
        raise _invalid()
    return moment


def _invalid() -> ValidationFailed:
    return invalid_parameter("cursor", "The cursor is not one this service returned.")


def page_limit(runtime: Runtime, limit: int | None) -> int:
    limits = runtime.settings.limits
    if limit is None:
        return limits.page_size
    if limit > limits.max_page_size:
        raise invalid_parameter("limit", f"limit must be at most {limits.max_page_size}")
    return limit


def partition_read(row: Row[Any]) -> PartitionRead:
    return PartitionRead.model_validate(row, from_attributes=True)


def partition_cursor(rows: Sequence[Row[Any]], limit: int) -> str | None:
    return encode_cursor(rows[-1].topic, rows[-1].partition) if len(rows) == limit else None
