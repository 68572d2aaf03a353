"""ListOffsets answers decoded into columns, at every version aiokafka may negotiate (v0-v5), from bytes
made by the emulator's independent codec; errors keep their names, missing offsets (v0) read -1."""

from __future__ import annotations

from typing import Any

import pytest
from aiokafka.protocol.offset import OffsetRequest

from app.adapters.kafka.codecs.list_offsets import ListOffsetsRequest, decode_list_offsets, read_list_offsets
from app.domain.ports import TopicPartition
from kafka_emulator.protocol import messages

LIST_OFFSETS = 2


def _partition(version: int, index: int) -> dict[str, Any]:
    error = 6 if index == 3 else 0  # NOT_LEADER_OR_FOLLOWER
    if version == 0:
        return {
            "PartitionIndex": index,
            "ErrorCode": error,
            "OldStyleOffsets": [] if index == 4 else [index * 7],
        }
    return {
        "PartitionIndex": index,
        "ErrorCode": error,
        "Timestamp": -1,
        "Offset": index * 7,
        "LeaderEpoch": 2,
    }


def _frame(version: int) -> bytes:
    topics = [
        {"Name": name, "Partitions": [_partition(version, i) for i in range(count)]}
        for name, count in (("orders", 1000), ("größe", 5), ("empty", 0))
    ]
    body = {"ThrottleTimeMs": 0, "Topics": topics}
    return messages.encode_response(LIST_OFFSETS, version, 1, body)[4:]  # after the correlation id


@pytest.mark.parametrize("version", range(6))
def test_every_version_decodes(version: int) -> None:
    answer = read_list_offsets(decode_list_offsets(_frame(version), 0, version))
    assert len(answer) == 1005
    assert answer[TopicPartition("orders", 999)] == ("NONE", 999 * 7)
    assert answer[TopicPartition("größe", 3)] == ("NOT_LEADER_OR_FOLLOWER", 21)
    assert answer[TopicPartition("größe", 4)] == ("NONE", -1 if version == 0 else 28)


def test_truncated_answer_is_refused() -> None:
    with pytest.raises(ValueError, match="ListOffsets"):
        decode_list_offsets(_frame(1)[:-3], 0, 1)


def test_request_versions_are_aiokafkas() -> None:
    ours, theirs = ListOffsetsRequest._CLASSES, OffsetRequest._CLASSES
    assert [c.API_VERSION for c in ours] == [c.API_VERSION for c in theirs]
    assert [c.SCHEMA for c in ours] == [c.SCHEMA for c in theirs]
    assert all(c.RESPONSE_TYPE.__name__.startswith("ListOffsetsResponseV") for c in ours)


@pytest.mark.parametrize("ours", ListOffsetsRequest._CLASSES, ids=lambda c: f"v{c.API_VERSION}")
def test_requests_are_written_byte_for_byte_as_aiokafka_writes_them(ours: Any) -> None:
    theirs = next(c for c in OffsetRequest._CLASSES if c.API_VERSION == ours.API_VERSION)
    assert ours.encode is not theirs.encode  # written by this service's encoder, compared with aiokafka's
    topics = [
        ("orders", [(p, -1) for p in range(1000)]),
        ("größe", [(3, -2), (4, 1_700_000_000_000)]),
        ("e", []),
    ]
    if ours.API_VERSION == 0:
        topics = [(name, [(p, ts, 1) for p, ts in parts]) for name, parts in topics]
        args: tuple[Any, ...] = (-1, topics)
    else:
        args = (-1, topics) if ours.API_VERSION == 1 else (-1, 0, topics)
    assert ours(*args).encode() == theirs(*args).encode()
    if ours.API_VERSION >= 2:
        assert ours(-1, 1, topics).encode() == theirs(-1, 1, topics).encode()  # read_committed
