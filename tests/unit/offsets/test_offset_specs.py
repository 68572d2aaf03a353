"""Pure rules: spec resolution, whole-topic expansion, impact figures, timestamp judgement."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain.deletion_requests import (
    TopicTraits,
    is_compact_only,
    partition_impact,
    predict_outcome,
    uncommitted,
    unconsumed_groups,
)
from app.domain.offsets import Facts, OffsetSpec, PlannedCut, SpecEntry, expand, needed_facts, resolve
from app.domain.ports import TimeOffset, TopicPartition
from app.domain.timestamps import judge_cut
from app.schemas.specs import epoch_ms, parse_rfc3339

TP = TopicPartition


def test_exactly_one_spec() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        OffsetSpec()
    with pytest.raises(ValueError, match="exactly one"):
        OffsetSpec(offset=1, to_end=True)


def test_whole_topic_entries_expand_and_overlaps_are_problems() -> None:
    entries = [
        SpecEntry(0, "a", None, OffsetSpec(to_end=True)),
        SpecEntry(1, "a", 1, OffsetSpec(offset=3)),
        SpecEntry(2, "b", 5, OffsetSpec(offset=3)),
    ]
    cuts, problems = expand(entries, {"a": 3, "b": 2})
    assert [c.partition for c in cuts] == [TP("a", 0), TP("a", 1), TP("a", 2)]
    assert [(p.index, p.unknown) for p in problems] == [(1, False), (2, True)]


def test_resolution_of_every_spec() -> None:
    cuts = [
        PlannedCut(0, TP("t", 0), OffsetSpec(offset=-1)),
        PlannedCut(1, TP("t", 1), OffsetSpec(before_ms=50)),
        PlannedCut(2, TP("t", 2), OffsetSpec(before_ms=99)),
        PlannedCut(3, TP("t", 3), OffsetSpec(committed_by=("g1", "g2"))),
        PlannedCut(4, TP("t", 4), OffsetSpec(committed_by=("g1", "g3"))),
        PlannedCut(5, TP("t", 5), OffsetSpec(to_end=True)),
    ]
    needed = needed_facts(cuts)
    assert needed.groups == ["g1", "g2", "g3"]
    assert needed.times == {TP("t", 1): 50, TP("t", 2): 99}
    facts = Facts(
        high_watermarks={TP("t", p): 10 + p for p in range(6)},
        times={TP("t", 1): TimeOffset(4, 60), TP("t", 2): TimeOffset(-1, -1)},
        committed={"g1": {TP("t", 3): 7, TP("t", 4): 2}, "g2": {TP("t", 3): 5}, "g3": {}},
    )
    resolved, problems = resolve(cuts, facts)
    assert resolved == {TP("t", 0): 10, TP("t", 1): 4, TP("t", 2): 12, TP("t", 3): 5, TP("t", 5): 15}
    assert [(p.index, p.message) for p in problems] == [(4, "group(s) g3 have no committed offset on t-4")]


def test_impact_counts_unread_records_from_the_log_start() -> None:
    committed = {"behind": {TP("t", 0): 2}, "ahead": {TP("t", 0): 9}, "gone": {TP("t", 0): 1}, "none": {}}
    impact = partition_impact(TP("t", 0), 8, 4, 10, "NONE", committed, {})
    assert impact.records_deleted == 4
    assert {(g.group, g.unread_records) for g in impact.groups} == {("behind", 4), ("gone", 4)}
    assert [(g.group, g.unread_records) for g in unconsumed_groups([impact], ["gone"])] == [("behind", 4)]
    failed = partition_impact(TP("t", 0), 11, 4, 10, "OFFSET_OUT_OF_RANGE", committed, {})
    assert (failed.records_deleted, failed.groups) == (0, ())


def test_uncommitted_records_lie_between_the_last_stable_offset_and_the_cut() -> None:
    """Log start 4, last stable offset 7 (a transaction open from there), high watermark 10."""
    at_end = partition_impact(TP("t", 0), 10, 4, 10, "NONE", {}, {})
    assert uncommitted(at_end, 7) == 3
    assert uncommitted(partition_impact(TP("t", 0), 8, 4, 10, "NONE", {}, {}), 7) == 1
    assert uncommitted(partition_impact(TP("t", 0), 6, 4, 10, "NONE", {}, {}), 7) == 0
    assert uncommitted(at_end, 10) == 0  # no transaction open
    assert uncommitted(at_end, 2) == 6  # open below the log start: only the records still there count
    assert uncommitted(partition_impact(TP("t", 0), 10, 4, 10, "POLICY_VIOLATION", {}, {}), 7) == 0


def test_predicted_outcomes() -> None:
    plain = TopicTraits(internal=False, compact_only=False, cleanup_policy="delete")
    compact = TopicTraits(internal=False, compact_only=True, cleanup_policy="compact")
    assert predict_outcome(5, 10, plain, leader_only=False, leader_version=-1) == "NONE"
    assert predict_outcome(11, 10, plain, leader_only=False, leader_version=-1) == "OFFSET_OUT_OF_RANGE"
    assert predict_outcome(5, 10, compact, leader_only=False, leader_version=3) == "POLICY_VIOLATION"
    assert predict_outcome(5, 10, plain, leader_only=True, leader_version=2) == "UNSUPPORTED_VERSION"
    assert predict_outcome(5, 10, plain, leader_only=True, leader_version=3) == "NONE"
    assert is_compact_only("compact")
    assert not is_compact_only("compact,delete")
    assert not is_compact_only(" delete , compact ")
    assert not is_compact_only(None)


def test_timestamps_around_the_cut() -> None:
    ordered = judge_cut(350, 3, [(o, t) for o, t in enumerate([100, 200, 300, 400, 500])])
    assert not ordered.out_of_order
    skewed = judge_cut(350, 3, [(o, t) for o, t in enumerate([100, 200, 360, 900, 250])])
    assert (skewed.newer_below_cut, skewed.older_at_or_after_cut, skewed.decreasing) == (1, 1, True)


def test_rfc3339_needs_an_offset() -> None:
    assert epoch_ms("1970-01-01T00:00:01.5Z") == 1500
    assert epoch_ms("1970-01-01T02:00:00+02:00") == 0
    assert epoch_ms(42) == 42
    for text in ("2026-11-20T00:00:00", "2026-11-20", "yesterday", "2026-11-20T00:00:00+0200"):
        with pytest.raises(ValueError, match="RFC 3339"):
            parse_rfc3339(text)


@given(st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 1, 1)), st.integers(-720, 720))
def test_rfc3339_matches_python(moment: datetime, minutes: int) -> None:
    zone = UTC if minutes == 0 else timezone(timedelta(minutes=minutes))
    aware = moment.replace(tzinfo=zone)
    text = aware.isoformat()
    if "+" not in text[10:] and "-" not in text[10:]:
        text += "Z"
    assert parse_rfc3339(text) == aware
