"""Topic names in requests follow Kafka's rules exactly: legal ASCII characters, 1-249, not . or .."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from app.schemas.deletions import PartitionOffset

LEGAL = re.compile(r"[a-zA-Z0-9._-]{1,249}")
legal_names = st.from_regex(LEGAL, fullmatch=True).filter(lambda name: name not in {".", ".."})


def _accepted(topic: object) -> bool:
    try:
        PartitionOffset.model_validate({"topic": topic, "partition": 0, "offset": 0})
    except ValidationError:
        return False
    return True


@given(legal_names)
def test_legal_names_are_accepted(name: str) -> None:
    assert _accepted(name)


@given(st.text(max_size=300))
def test_any_text_is_accepted_exactly_when_kafka_would(name: str) -> None:
    kafka_accepts = LEGAL.fullmatch(name) is not None and name not in {".", ".."}
    assert _accepted(name) == kafka_accepts


@given(legal_names, st.sampled_from(["\n", "\u212a", "\u017f", "\x00", " ", "\uff11", "/", "\u202e"]))
def test_one_illegal_character_anywhere_is_refused(name: str, bad: str) -> None:
    for position in (0, len(name) // 2, len(name)):
        assert not _accepted(name[:position] + bad + name[position:])
