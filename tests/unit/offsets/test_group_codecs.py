"""Decoding the consumer protocol bytes of DescribeGroups and OffsetFetch answers, byte by byte."""

from __future__ import annotations

import struct

import pytest

from app.adapters.kafka.codecs.consumer_protocol import assigned_partitions, subscribed_topics
from app.adapters.kafka.codecs.offset_fetch import (
    decode_offset_fetch,
    decode_offset_fetch_v8,
    offset_fetch_v8_body,
)
from app.domain.ports import TopicPartition


def _string(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


def test_subscription_versions_decode_and_trailing_fields_are_ignored() -> None:
    v0 = struct.pack(">hi", 0, 2) + _string("orders") + _string("clicks") + struct.pack(">i", -1)
    assert subscribed_topics(v0) == ("orders", "clicks")
    v3 = (
        struct.pack(">hi", 3, 1) + _string("a") + struct.pack(">i", 0) + b"owned partitions, generation, rack"
    )
    assert subscribed_topics(v3) == ("a",)
    assert subscribed_topics(b"") == ()
    assert subscribed_topics(b"\x00\x00\x7f\xff\xff\xff") == ()  # an array length past the end


def test_assignment_decodes() -> None:
    data = struct.pack(">hi", 1, 1) + _string("t") + struct.pack(">iii", 2, 0, 2) + struct.pack(">i", -1)
    assert assigned_partitions(data) == (TopicPartition("t", 0), TopicPartition("t", 2))
    assert assigned_partitions(data[:9]) == ()


def test_offset_fetch_v3_answer() -> None:
    body = struct.pack(">ii", 0, 1) + _string("t") + struct.pack(">i", 2)
    body += struct.pack(">iq", 0, 7) + _string("meta") + struct.pack(">h", 0)
    body += struct.pack(">iq", 1, -1) + struct.pack(">h", -1) + struct.pack(">h", 0)
    body += struct.pack(">h", 0)
    answer = decode_offset_fetch(body, 0, 3)
    assert answer.partitions == {("t", 0): (7, 0), ("t", 1): (-1, 0)}
    with pytest.raises(ValueError, match="unread bytes"):
        decode_offset_fetch(body + b"\x00", 0, 3)


def test_offset_fetch_v8_answer_with_metadata_and_tagged_fields() -> None:
    data = bytes.fromhex(
        "000000000202610202740200000000000000000000000500000003046162630007010101050000000000"
    )
    assert decode_offset_fetch_v8(data, 0).groups["a"].partitions == {("t", 0): (5, 7)}
    with pytest.raises(ValueError, match="truncated"):
        decode_offset_fetch_v8(data[:20], 0)


def test_offset_fetch_v8_request_body() -> None:
    body = offset_fetch_v8_body(["g"], [("t", [0, 1])])
    assert body == bytes.fromhex("02026702027403000000000000000100000000")
