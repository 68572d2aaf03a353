"""The referee's judgement itself (no cluster): a difference fails unless an allowance covers its path,
and an allowance that excuses nothing is reported stale."""

from __future__ import annotations

from helpers.referee.compare import Allowance, judge, stale

V3 = Allowance("v3", ["/0/delete_records/*"], "the LeaderOnly draft")


def test_a_difference_no_allowance_covers_is_unexplained() -> None:
    verdict = judge("s", [{"fetch": {"error": "NONE"}}], [{"fetch": {"error": "OFFSET_OUT_OF_RANGE"}}], [V3])
    assert verdict.unexplained == {"/0/fetch/error": ("NONE", "OFFSET_OUT_OF_RANGE")}
    assert stale([V3], [verdict]) == [V3]


def test_an_allowance_covers_only_its_scenario_and_paths() -> None:
    emulator = [{"delete_records": {"0": {"error": "NONE"}}}, {"fetch": {"records": True}}]
    kafka = [{"delete_records": {"closed": True}}, {"fetch": {"records": False}}]
    verdict = judge("v3", emulator, kafka, [V3])
    assert verdict.allowed == [V3]
    assert verdict.unexplained == {"/1/fetch/records": (True, False)}
    assert judge("v3", emulator[:1], kafka[:1], [V3]).unexplained == {}
    assert judge("other", emulator[:1], kafka[:1], [V3]).unexplained != {}


def test_identical_observations_have_no_differences() -> None:
    observed = [{"list_offsets": {"0": {"offset": 4, "leader_epoch": 0}}}]
    assert judge("s", observed, observed, []).differences == {}
