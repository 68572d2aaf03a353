"""Struct arrays given as ``Rows``: the same bytes as the same elements given as dicts, at every
OffsetFetch version, with and without commit metadata, and as a plain sequence of messages."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_emulator.protocol import messages
from kafka_emulator.protocol.rows import Rows

OFFSET_FETCH = 9
FIELDS = ("PartitionIndex", "CommittedOffset", "CommittedLeaderEpoch", "Metadata", "ErrorCode")


def _body(version: int, partitions: Any) -> dict[str, Any]:
    topics = [{"Name": "orders", "Partitions": partitions}, {"Name": "empty", "Partitions": Rows(FIELDS, [])}]
    if version >= 8:
        return {"ThrottleTimeMs": 0, "Groups": [{"GroupId": "g", "Topics": topics, "ErrorCode": 0}]}
    return {"ThrottleTimeMs": 0, "Topics": topics, "ErrorCode": 0}


def _encoded(version: int, partitions: Any) -> bytes:
    return messages.encode_response(OFFSET_FETCH, version, 7, _body(version, partitions))


ROWS = [(p, p * 10 if p % 3 else -1, 5 if p % 2 else -1, "", 0 if p % 5 else 3) for p in range(1000)]


@pytest.mark.parametrize("version", range(9))
@pytest.mark.parametrize("metadata", ["", "some metadata", None])
def test_rows_encode_like_dicts(version: int, metadata: str | None) -> None:
    rows = [(*row[:3], metadata if row[0] == 500 else "", *row[4:]) for row in ROWS]
    as_dicts = [dict(zip(FIELDS, row, strict=True)) for row in rows]
    assert _encoded(version, Rows(FIELDS, rows)) == _encoded(version, as_dicts)
    _, decoded = messages.decode_response(OFFSET_FETCH, version, _encoded(version, Rows(FIELDS, rows)))
    topics = decoded["Groups"][0]["Topics"] if version >= 8 else decoded["Topics"]
    assert [p["CommittedOffset"] for p in topics[0]["Partitions"]] == [row[1] for row in rows]


def test_fields_left_out_take_their_defaults() -> None:
    names = ("PartitionIndex", "CommittedOffset", "Metadata", "ErrorCode")
    rows = [(p, p, "", 0) for p in range(10)]
    as_dicts = [dict(zip(names, row, strict=True)) for row in rows]
    assert _encoded(8, Rows(names, rows)) == _encoded(8, as_dicts)


def test_rows_read_as_messages() -> None:
    rows = Rows(FIELDS, ROWS[:3])
    assert len(rows) == 3
    assert rows[1] == dict(zip(FIELDS, ROWS[1], strict=True))
    assert [m["PartitionIndex"] for m in rows] == [0, 1, 2]
    assert rows[1:] == [dict(zip(FIELDS, row, strict=True)) for row in ROWS[1:3]]
