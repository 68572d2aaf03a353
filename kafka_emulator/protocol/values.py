"""Schema default values, as Kafka's message generator defines them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_emulator.protocol.primitives import FIXED_FORMATS
from kafka_emulator.protocol.schema import FieldSpec, SchemaError

_INTEGERS = {"int8", "int16", "uint16", "int32", "uint32", "int64"}


def _parse_int(text: str) -> int:
    lowered = text.lower()
    if lowered.startswith(("0x", "-0x")):
        return int(lowered, 16)
    return int(text)


def _scalar_default(field: FieldSpec, nullable: bool) -> Any:
    kind = field.type
    text = field.default
    if text == "null":
        if not nullable:
            raise SchemaError(f"{field.name}: null default on a non-nullable field")
        return None
    if kind in _INTEGERS:
        return _parse_int(text) if text else 0
    if kind == "bool":
        return text == "true"
    if kind == "float64":
        return float(text) if text else 0.0
    if kind == "uuid":
        return bytes(16)
    if kind == "string":
        return text or ""
    if kind == "bytes":
        return b""
    if kind == "records":
        return None if nullable else b""
    raise SchemaError(f"{field.name}: unknown type {kind}")


def default_factory(field: FieldSpec, version: int, flexible: bool) -> Callable[[], Any]:
    """A function returning a fresh default (fresh so that callers may mutate lists and dicts)."""
    nullable = version in field.nullable_versions
    if field.is_array:
        if field.default == "null" and nullable:
            return lambda: None
        return list
    if field.type in FIXED_FORMATS or field.type in ("string", "bytes", "records"):
        value = _scalar_default(field, nullable)
        return lambda: value
    children = [
        (f.name, default_factory(f, version, flexible)) for f in field.fields if version in f.versions
    ]

    def make_struct() -> dict[str, Any]:
        return {name: make() for name, make in children}

    return make_struct
