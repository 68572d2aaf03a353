"""Request pieces for offset specs: times (RFC 3339 with an offset, or epoch ms) and consumer group ids."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

INT64_MAX = 2**63 - 1
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})")


def parse_rfc3339(text: str) -> datetime:
    """An RFC 3339 date-time; the offset (``Z`` or ``+hh:mm``) is required, never guessed."""
    if not _RFC3339.fullmatch(text):
        raise ValueError("must be RFC 3339 with an offset, e.g. 2026-11-20T00:00:00Z, or epoch milliseconds")
    head, _, fraction = text[:19], text[19:20], text[19:]
    digits = re.match(r"\.(\d+)", fraction)
    micro = (digits.group(1)[:6].ljust(6, "0")) if digits else "000000"
    offset = re.search(r"([Zz]|[+-]\d{2}:\d{2})$", text)
    zone = "+00:00" if offset is None or offset.group(1) in ("Z", "z") else offset.group(1)
    return datetime.fromisoformat(f"{head[:10]}T{head[11:19]}.{micro}{zone}")


def _check_time(value: str | int) -> str | int:
    if isinstance(value, str):
        parse_rfc3339(value)
    return value


def epoch_ms(value: str | int) -> int:
    """Milliseconds since the epoch; a time before 1970 is 0, before every record (a negative time would
    reach ListOffsets as one of its special timestamps: -1 is the high watermark)."""
    if isinstance(value, int):
        return value
    return max(0, _ms(parse_rfc3339(value)))


def _ms(moment: datetime) -> int:
    delta = moment - datetime.fromisoformat("1970-01-01T00:00:00+00:00")
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


# RFC 3339 date-times Python can read, as a pattern the document states: years 0001-9999, each month's
# days (29 February in leap years), hours to 23, seconds to 59 (no leap second), up to 9 fraction digits.
_YEAR = r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})"
_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_MONTH_DAY = (
    r"(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
)
_TIME = (
    r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)
RFC3339_PATTERN = rf"^(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)[Tt ]{_TIME}$"

CutTime = Annotated[
    Annotated[str, StringConstraints(max_length=40, pattern=RFC3339_PATTERN)]
    | Annotated[int, Field(ge=0, le=INT64_MAX)],
    AfterValidator(_check_time),
    Field(description="Delete records older than this time: RFC 3339 with an offset, or epoch ms"),
]
GroupId = Annotated[str, StringConstraints(min_length=1, max_length=255)]
