"""Topic regexes matched in linear time, with RE2 (google-re2).

A retention policy's regex comes from any authenticated caller and is matched against every topic of a
cluster at every sweep, so Python's backtracking ``re`` would let a pattern such as ``(a|a)*b`` stall the
event loop. RE2 matches in time linear in the topic name and refuses what it cannot do that way
(backreferences, lookaround). It is a pure computation library with no I/O, so the domain uses it the
way it would use ``re``. A pattern matches a topic when it matches the whole name (``fullmatch``).
``TopicSelector`` chooses topics by prefix, such a regex or names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import re2  # type: ignore[import-untyped]

MAX_PATTERN_LENGTH = 512

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is the caller's 422, not a line on the service's stderr


class TopicPatternError(ValueError):
    """The pattern is too long or not valid RE2 syntax."""


class TopicPattern:
    """A compiled topic regex; ``matches`` is a full match."""

    __slots__ = ("_compiled", "text")

    def __init__(self, text: str, compiled: Any) -> None:
        self.text = text
        self._compiled = compiled

    def matches(self, topic: str) -> bool:
        return self._compiled.fullmatch(topic) is not None


@lru_cache(maxsize=256)
def compile_topic_pattern(text: str) -> TopicPattern:
    """Compile ``text`` with RE2; raises ``TopicPatternError`` for a long or unsupported pattern."""
    if len(text) > MAX_PATTERN_LENGTH:
        raise TopicPatternError(f"the regex is longer than {MAX_PATTERN_LENGTH} characters")
    try:
        compiled = re2.compile(text, _OPTIONS)
    except re2.error as exc:
        message = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise TopicPatternError(
            f"the regex is not valid RE2 syntax ({message}); backreferences and lookaround are not supported"
        ) from None
    return TopicPattern(text, compiled)


@dataclass(frozen=True)
class TopicSelector:
    """Exactly one of ``prefix``, ``regex`` (RE2, full match: ``app.domain.topic_patterns``) or ``names``."""

    prefix: str | None = None
    regex: str | None = None
    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        chosen = [self.prefix is not None, self.regex is not None, bool(self.names)]
        if sum(chosen) != 1:
            raise ValueError("a topic selector has exactly one of prefix, regex or names")
        if self.regex is not None:
            compile_topic_pattern(self.regex)

    @classmethod
    def of(cls, stored: Mapping[str, Any]) -> TopicSelector:
        """From its stored form (``{"prefix": ...}``, ``{"regex": ...}`` or ``{"names": [...]}``)."""
        return cls(
            prefix=stored.get("prefix"), regex=stored.get("regex"), names=tuple(stored.get("names") or ())
        )

    def matches(self, topic: str) -> bool:
        if self.prefix is not None:
            return topic.startswith(self.prefix)
        if self.regex is not None:
            return compile_topic_pattern(self.regex).matches(topic)
        return topic in self.names

    def select(self, topics: Sequence[str]) -> list[str]:
        return sorted(t for t in topics if self.matches(t))
