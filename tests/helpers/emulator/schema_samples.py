"""Random values for every field of a schema at one version (for codec round-trip tests)."""

from __future__ import annotations

import random
from typing import Any

from kafka_emulator.protocol.schema import FieldSpec

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
_TEXT = ["", "t", "orders-1", "zé-ü", "a" * 300]


def _scalar(kind: str, rng: random.Random, field: FieldSpec, version: int, flexible: bool) -> Any:
    if kind in _INT_RANGES:
        low, high = _INT_RANGES[kind]
        return rng.choice([low, high, 0, -1, rng.randint(low, high)])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "float64":
        return rng.choice([0.0, -1.5, 1e300, rng.random()])
    if kind == "uuid":
        return rng.randbytes(16)
    if kind == "string":
        return rng.choice(_TEXT)
    if kind in ("bytes", "records"):
        return rng.randbytes(rng.choice([0, 1, 70, 200]))
    return sample_struct(field.fields, version, flexible, rng)


def sample_value(field: FieldSpec, version: int, flexible: bool, rng: random.Random) -> Any:
    if version in field.nullable_versions and rng.random() < 0.2:
        return None
    if field.is_array:
        count = rng.choice([0, 1, 2, 3])
        return [_scalar(field.element_type, rng, field, version, flexible) for _ in range(count)]
    return _scalar(field.type, rng, field, version, flexible)


def sample_struct(
    fields: tuple[FieldSpec, ...], version: int, flexible: bool, rng: random.Random
) -> dict[str, Any]:
    return {f.name: sample_value(f, version, flexible, rng) for f in fields if version in f.versions}
