"""JSON Schema for "exactly one of these fields" (a topic selection's ``prefix``, ``regex`` or ``names``),
which a pydantic model states in a validator the generated document cannot read.

A field counts when it is present and not null. A ``regex`` also says it is a regular expression, as
far as JSON Schema can: the service accepts RE2 syntax, full match.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

_FORMATS = {"regex": "regex"}


def given(field: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"not": {"type": "null"}}
    if field in _FORMATS:
        schema["format"] = _FORMATS[field]
    return {"required": [field], "properties": {field: schema}}


def exactly_one(*fields: str) -> dict[str, Any]:
    return {"oneOf": [given(field) for field in fields]}


def at_most_one(*fields: str) -> dict[str, Any]:
    return {"not": {"anyOf": [{"allOf": [given(a), given(b)]} for a, b in combinations(fields, 2)]}}
