"""Which characters a request's strings may hold.

Control characters are refused everywhere: PostgreSQL cannot store NUL in text at all (SQLite can), and
none of them belongs in a name, id, path or principal. The C0 set (U+0000-U+001F), DEL (U+007F), the C1
set (U+0080-U+009F) and lone surrogates (which are not text and cannot be encoded) are refused in
query and path parameters and in token claims. In JSON bodies tab, line feed and carriage return are
allowed, for free text such as a deletion's ``reason``; the fields that name things refuse them by their
own patterns.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl

_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_FORBIDDEN_IN_BODY = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
# A JSON text can only carry those characters as escapes (``\u0000``, ``\b``, ``\f``) or as raw DEL and
# C1 characters (JSON refuses raw C0 itself); a body with none of these needs no walk.
_MAYBE_FORBIDDEN_JSON = re.compile("\\\\[ubf]|[\x7f-\x9f]")
# The same question asked of the UTF-8 bytes at memchr speed: no backslash, no DEL and no 0xC2 (the lead
# byte of U+0080-U+00BF, the C1 set among them) means none of them (0.04 ms instead of 7 ms at 580 KB).
_MAYBE_FORBIDDEN_BYTES = (b"\\", b"\x7f", b"\xc2")

CONTROL_CHARACTER_DETAIL = "Control characters are not allowed here."


def has_control_character(text: str) -> bool:
    """Whether ``text`` holds a character refused in parameters, names and claims."""
    return _FORBIDDEN.search(text) is not None


def control_character_parameter(path: str, query: str) -> tuple[str, str] | None:
    """(name, "path" or "query") of the first place a control character is in a request's path or its
    (latin-1 decoded) query string, or None. The problem names the parameter, never its value; a query
    parameter with a control character in its name is "query"."""
    if has_control_character(path):
        return "path", "path"
    if "%" not in query and not has_control_character(query):
        return None
    # Decoded as Starlette decodes it for the routes (UTF-8, undecodable bytes replaced).
    for name, value in parse_qsl(query, keep_blank_values=True):
        if has_control_character(name):
            return "query", "query"
        if has_control_character(value):
            return name, "query"
    return None


def control_character_pointer(body: bytes, value: Any) -> str | None:
    """The JSON pointer of the first string (member name or value) in ``value``, the parsed form of the
    UTF-8 JSON ``body``, that holds a character refused in bodies; None when there is none."""
    if not any(marker in body for marker in _MAYBE_FORBIDDEN_BYTES):
        return None
    if _MAYBE_FORBIDDEN_JSON.search(body.decode("utf-8")) is None:
        return None
    found = _first_forbidden(value)
    if found is None:
        return None
    return "#" + "".join("/" + token.replace("~", "~0").replace("/", "~1") for token in found)


def _first_forbidden(value: Any) -> list[str] | None:
    """The path to the first refused string; a refused member name points at its object. Iterative, as
    deep as the parser lets a body nest."""
    pending: list[tuple[list[str], Any]] = [([], value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, str):
            if _FORBIDDEN_IN_BODY.search(item):
                return path
        elif isinstance(item, dict):
            if any(_FORBIDDEN_IN_BODY.search(key) for key in item):
                return path
            pending.extend(([*path, key], member) for key, member in reversed(item.items()))
        elif isinstance(item, list):
            pending.extend(([*path, str(index)], member) for index, member in reversed(list(enumerate(item))))
    return None
