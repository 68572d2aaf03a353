"""The webhook URL pattern the document states refuses exactly the characters the service refuses."""

from __future__ import annotations

import re
import unicodedata

from app.domain.webhook_targets import TargetRefused, parse_target
from app.schemas.webhooks import REFUSED_CHARACTERS, URL_SHAPE

REFUSED_CATEGORIES = ("Cc", "Cf", "Zl", "Zp", "Zs")


def _refused(code: int) -> bool:
    character = chr(code)
    return character.isspace() or unicodedata.category(character) in REFUSED_CATEGORIES


def test_the_table_is_every_character_the_service_refuses() -> None:
    tabled = {code for first, last in REFUSED_CHARACTERS for code in range(first, last + 1)}
    refused = {code for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF and _refused(code)}
    assert tabled == refused


def test_a_refused_character_breaks_the_pattern_and_the_service_refuses_it() -> None:
    for first, last in REFUSED_CHARACTERS:
        for code in {first, last}:
            url = f"https://hooks.example.com/in{chr(code)}side"
            assert re.fullmatch(URL_SHAPE, url) is None, hex(code)
            try:
                parse_target(url)
            except TargetRefused:
                continue
            raise AssertionError(f"U+{code:04X} was not refused")
    assert re.fullmatch(URL_SHAPE, "https://hooks.example.com/caf\u00e9?\U0001f600=1")
