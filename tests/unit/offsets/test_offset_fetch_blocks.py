"""OffsetFetch v8 answers decoded a topic at a time: the one-unpack path for the usual entries and the
entry-by-entry path (metadata, null metadata, errors) give the same partitions, as encoded by the
emulator's independent codec."""

from __future__ import annotations

from typing import Any

import pytest

from app.adapters.kafka.codecs.offset_fetch import decode_offset_fetch_v8
from kafka_emulator.protocol import messages

OFFSET_FETCH = 9


def _answer(partitions: list[dict[str, Any]]) -> bytes:
    body = {
        "ThrottleTimeMs": 0,
        "Groups": [
            {"GroupId": "g1", "Topics": [{"Name": "t", "Partitions": partitions}], "ErrorCode": 0},
            {"GroupId": "g2", "Topics": [], "ErrorCode": 16},
        ],
    }
    frame = messages.encode_response(OFFSET_FETCH, 8, 1, body)
    return frame[5:]  # correlation id and the header's empty tag buffer


def _partitions(count: int, odd: int | None, metadata: str | None, error: int) -> list[dict[str, Any]]:
    return [
        {
            "PartitionIndex": p,
            "CommittedOffset": p * 3 - 1,
            "CommittedLeaderEpoch": 2,
            "Metadata": metadata if p == odd else "",
            "ErrorCode": error if p == odd else 0,
        }
        for p in range(count)
    ]


@pytest.mark.parametrize(
    ("odd", "metadata", "error"),
    [(None, "", 0), (0, "meta", 0), (499, None, 0), (250, "", 3), (999, "x" * 300, 0)],
)
def test_blocks_decode_every_entry(odd: int | None, metadata: str | None, error: int) -> None:
    partitions = _partitions(1000, odd, metadata, error)
    answer = decode_offset_fetch_v8(_answer(partitions), 0)
    expected = {("t", p["PartitionIndex"]): (p["CommittedOffset"], p["ErrorCode"]) for p in partitions}
    assert answer.groups["g1"].partitions == expected
    assert answer.groups["g2"].error_code == 16
    assert answer.groups["g2"].topics == {}


def test_truncated_block_is_refused() -> None:
    data = _answer(_partitions(10, None, "", 0))
    with pytest.raises(ValueError, match="OffsetFetch v8"):
        decode_offset_fetch_v8(data[:60], 0)
