"""How an approval rule and a retention policy name topics: ``prefix``, ``regex`` or ``names``."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from app.domain.topic_patterns import MAX_PATTERN_LENGTH, TopicPatternError, compile_topic_pattern
from app.schemas.consumers import NAME_PATTERN
from app.schemas.deletions import TopicName


class TopicSelectors(BaseModel):
    """The three fields; each model says in its own validator how many of them it takes."""

    prefix: Annotated[str, StringConstraints(min_length=1, max_length=249, pattern=NAME_PATTERN)] | None = (
        Field(default=None, description="Every topic whose name starts with this, now and in the future")
    )
    regex: Annotated[str, StringConstraints(min_length=1, max_length=MAX_PATTERN_LENGTH)] | None = Field(
        default=None, description="RE2 syntax (no backreferences or lookaround), matched against whole names"
    )
    names: list[TopicName] | None = Field(
        default=None, min_length=1, max_length=10_000, description="These topics, by name"
    )

    def chosen(self) -> int:
        """How many of the three are given."""
        return sum(v is not None for v in (self.prefix, self.regex, self.names))

    def check_regex(self) -> None:
        """``ValueError`` unless the regex, when given, compiles (RE2 is linear-time: compiling is cheap)."""
        if self.regex is not None:
            try:
                compile_topic_pattern(self.regex)
            except TopicPatternError as exc:
                raise ValueError(str(exc)) from None
