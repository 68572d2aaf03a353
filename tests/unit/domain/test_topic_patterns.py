"""Topic regexes (RE2): full match like ``re.fullmatch``, linear time, refusals with a clear message."""

from __future__ import annotations

import time

import pytest

from app.domain.topic_patterns import (
    MAX_PATTERN_LENGTH,
    TopicPatternError,
    TopicSelector,
    compile_topic_pattern,
)


@pytest.mark.parametrize(
    ("pattern", "topic", "matches"),
    [
        (r"inter\.[a-z]+", "inter.abc", True),
        (r"inter\.[a-z]+", "inter.abc1", False),
        (r"inter\..*", "xinter.a", False),
        ("a|b", "ab", False),
        (r"orders\.(eu|us)", "orders.eu", True),
    ],
)
def test_patterns_match_whole_names(pattern: str, topic: str, matches: bool) -> None:
    assert compile_topic_pattern(pattern).matches(topic) is matches
    assert TopicSelector(regex=pattern).matches(topic) is matches


def test_a_catastrophic_pattern_is_linear() -> None:
    started = time.monotonic()
    assert not TopicSelector(regex="(a|a)*b").matches("a" * 249)
    assert not compile_topic_pattern("(a*)*$b").matches("a" * 249)
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("pattern", [r"(a)\1", "(?=a)a", "(?<=a)b", "(", "a" * (MAX_PATTERN_LENGTH + 1)])
def test_patterns_re2_cannot_run_are_refused(pattern: str) -> None:
    with pytest.raises(TopicPatternError):
        compile_topic_pattern(pattern)
    with pytest.raises(TopicPatternError):
        TopicSelector(regex=pattern)
