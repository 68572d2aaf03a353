"""Canonical JSON: one byte sequence per content, whatever the key order or time zone."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from enum import StrEnum

import pytest

from app.audit import canonical_json, canonical_object, chain_hash, rfc3339
from app.audit.chain import normalized


def test_keys_sorted_and_no_whitespace() -> None:
    assert canonical_json({"b": [1, {"d": 2, "c": "é"}], "a": None}) == '{"a":null,"b":[1,{"c":"é","d":2}]}'


def test_datetimes_are_rfc3339_utc_with_microseconds() -> None:
    plus_two = timezone(timedelta(hours=2))
    moment = datetime(2026, 11, 21, 12, 0, 0, tzinfo=plus_two)
    assert rfc3339(moment) == "2026-11-21T10:00:00.000000Z"
    assert canonical_json({"t": moment}) == '{"t":"2026-11-21T10:00:00.000000Z"}'


def test_refuses_naive_datetimes_nan_and_unknown_types() -> None:
    with pytest.raises(ValueError, match="naive"):
        rfc3339(datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="Out of range float"):
        canonical_json({"x": float("nan")})
    with pytest.raises(TypeError):
        canonical_json({"x": {1, 2}})


def test_hash_depends_on_previous_hash_and_every_field() -> None:
    content = {"id": 1, "occurred_at": rfc3339(datetime(2026, 1, 1, tzinfo=UTC)), "details": {"a": 1}}
    base = chain_hash("0" * 64, content)
    assert len(base) == 64
    assert chain_hash("1" * 64, content) != base
    assert chain_hash("0" * 64, {**content, "details": {"a": 2}}) != base
    assert chain_hash("0" * 64, dict(reversed(content.items()))) == base


def test_normalized_is_what_reads_back_plain_or_not() -> None:
    class Kind(StrEnum):
        A = "a"

    plain = {"b": [1, -0.0, 2**80, None, True, "é\u2028"], "a": {"x": [[], {}]}, "c": ["t"] * 3}
    awkward = {
        "tuple": (1, 2),
        "keys": {10: "ten", 9: "nine"},
        "enum": [Kind.A],
        "nested": [{"t": datetime(2026, 1, 1, tzinfo=UTC)}],
        "mixed": [1, (2,)],
    }
    for value in (plain, awkward, {}, [1, "x"], "x"):
        stored, text = normalized(value)
        assert stored == json.loads(canonical_json(value))
        assert text == canonical_json(stored)
    assert normalized(plain)[0] is plain
    assert normalized(awkward)[1].startswith('{"enum":["a"],"keys":{"10":"ten","9":"nine"}')
    assert type(normalized(awkward)[0]["enum"][0]) is str


def test_canonical_object_is_canonical_json_of_the_object() -> None:
    value = {"é": [1, None], "B": {"z": 1, "a": "x"}, "a": 'q"uote', "": True, "a b": [], "\\": 0}
    assert canonical_object({k: canonical_json(v) for k, v in value.items()}) == canonical_json(value)
