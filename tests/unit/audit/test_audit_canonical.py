"""Canonical JSON: one byte sequence per content, whatever the key order or time zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.audit import canonical_json, chain_hash, rfc3339


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
