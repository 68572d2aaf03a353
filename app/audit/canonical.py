"""Canonical JSON for hashing audit events: sorted keys, no whitespace, UTF-8, RFC 3339 UTC datetimes.

The same content always yields the same bytes, on either database and in any process.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

GENESIS_HASH = "0" * 64


def rfc3339(moment: datetime) -> str:
    """``2026-11-21T23:55:51.123456Z``: always UTC, always microseconds, so the text is unique."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime in audit content")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _default(value: object) -> str:
    if isinstance(value, datetime):
        return rfc3339(value)
    raise TypeError(f"{type(value).__name__} is not allowed in audit content")


def canonical_json(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_default
    )


def canonical_object(rendered: Mapping[str, str]) -> str:
    """``canonical_json`` of an object, given ``canonical_json`` of each of its values: a big object can
    be rendered in parts, some of them ahead."""
    return "{" + ",".join(canonical_json(key) + ":" + rendered[key] for key in sorted(rendered)) + "}"


_SCALARS = frozenset((str, int, float, bool, type(None)))


def _plain(value: Any) -> bool:
    """Whether ``value`` is made only of dicts with ``str`` keys, lists and exact JSON scalars, so that it
    reads back from its JSON as an equal value (no tuples, non-string keys, enums or datetimes)."""
    kind = type(value)
    if kind is dict:
        return all(type(key) is str for key in value) and all(_plain(item) for item in value.values())
    if kind is list:
        # A column of scalars (a 10,000-partition summary) is checked without a Python step per item.
        return set(map(type, value)) <= _SCALARS or all(_plain(item) for item in value)
    return kind in _SCALARS


def normalized(value: Any) -> tuple[Any, str]:
    """``value`` as it reads back from a JSON column, and its canonical JSON: what is stored is exactly
    what was hashed. Plain JSON (the usual case) is encoded once and returned as is, not copied."""
    text = canonical_json(value)
    if _plain(value):
        return value, text
    # Not plain: non-string keys may sort differently once they are strings, so encode what reads back.
    value = json.loads(text)
    return value, canonical_json(value)


def chain_hash(prev_hash: str, content: dict[str, Any]) -> str:
    """SHA-256 over the previous event's hash followed by this event's canonical content."""
    return hashlib.sha256((prev_hash + canonical_json(content)).encode("utf-8")).hexdigest()
