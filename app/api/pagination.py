"""Opaque cursors: URL-safe base64 of a small JSON array (the sort key of the last item returned)."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any

from app.api.problems import invalid_parameter
from app.errors import ValidationFailed

MAX_CURSOR_LENGTH = 512


def encode_cursor(*key: Any) -> str:
    raw = json.dumps(list(key), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, *types: type) -> tuple[Any, ...]:
    """The key encoded in ``cursor``, checked against ``types``; 422 for anything else."""
    try:
        if len(cursor) > MAX_CURSOR_LENGTH:
            raise ValueError
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        key = json.loads(raw)
    except (ValueError, binascii.Error):
        raise _invalid() from None
    if not isinstance(key, list) or len(key) != len(types):
        raise _invalid()
    if not all(type(value) is expected for value, expected in zip(key, types, strict=True)):
        raise _invalid()
    return tuple(key)


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
