"""OffsetFetch (API key 9) with this service's own response handling.

- v1-v3: answers for 10,000 partitions are decoded with precompiled ``struct`` formats straight into
  ``OffsetFetchAnswer`` (aiokafka's generic decoder costs about 0.17 s per such answer, and a preview
  asks once per consumer group).
- v8 (KIP-709): several groups of one coordinator in one request; the partition list, the same for
  every group, is encoded once.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache
from io import BytesIO
from typing import Any

from aiokafka.protocol.api import Request, RequestStruct
from aiokafka.protocol.commit import OffsetFetchRequest_v1, OffsetFetchRequest_v2, OffsetFetchRequest_v3
from aiokafka.protocol.types import Schema

from app.adapters.kafka.codecs.wire import INT16, INT32, WireReader, uvarint

OFFSET_FETCH_KEY = 9
_PARTITION_HEAD = struct.Struct(">iq")  # PartitionIndex, CommittedOffset
_PARTITION_TAIL = INT16  # ErrorCode (after the metadata string)


# One topic of an answer: partition indexes, committed offsets, error codes (same order)
Block = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class OffsetFetchAnswer:
    error_code: int
    topics: dict[str, Block]

    @property
    def partitions(self) -> dict[tuple[str, int], tuple[int, int]]:
        """(topic, partition) -> (committed offset, error code)."""
        return {
            (topic, index): (offset, error)
            for topic, (indexes, offsets, errors) in self.topics.items()
            for index, offset, error in zip(indexes, offsets, errors, strict=True)
        }


def _add(topics: dict[str, Block], name: str, block: Block) -> None:
    if name in topics:  # the same topic twice: keep both parts
        block = tuple(a + b for a, b in zip(topics[name], block, strict=True))  # type: ignore[assignment]
    topics[name] = block


def decode_offset_fetch(buf: bytes, pos: int, version: int) -> OffsetFetchAnswer:
    try:
        if version >= 3:
            pos += 4  # ThrottleTimeMs
        topics: dict[str, Block] = {}
        (count_topics,) = INT32.unpack_from(buf, pos)
        pos += 4
        for _ in range(max(count_topics, 0)):
            (length,) = INT16.unpack_from(buf, pos)
            name = buf[pos + 2 : pos + 2 + length].decode()
            pos += 2 + max(length, 0)
            (count,) = INT32.unpack_from(buf, pos)
            pos += 4
            entries = []
            for _ in range(max(count, 0)):
                index, offset = _PARTITION_HEAD.unpack_from(buf, pos)
                (meta,) = INT16.unpack_from(buf, pos + 12)
                pos += 14 + max(meta, 0)
                (error,) = _PARTITION_TAIL.unpack_from(buf, pos)
                pos += 2
                entries.append((index, offset, error))
            _add(topics, name, _columns(entries))
        error_code = 0
        if version >= 2:
            (error_code,) = INT16.unpack_from(buf, pos)
            pos += 2
    except struct.error as exc:
        raise ValueError(f"OffsetFetch response truncated: {exc}") from exc
    if pos != len(buf):
        raise ValueError(f"OffsetFetch response has {len(buf) - pos} unread bytes")
    return OffsetFetchAnswer(error_code, topics)


def _columns(entries: list[tuple[int, int, int]]) -> Block:
    if not entries:
        return (), (), ()
    indexes, offsets, errors = zip(*entries, strict=True)
    return indexes, offsets, errors


def _response_type(version: int) -> type:
    def decode(cls: type, data: BytesIO) -> OffsetFetchAnswer:
        return decode_offset_fetch(data.getvalue(), data.tell(), version)

    namespace = {"API_KEY": OFFSET_FETCH_KEY, "API_VERSION": version, "decode": classmethod(decode)}
    return type(f"OffsetFetchResponseV{version}", (), namespace)


def _struct(version: int, schema: Any) -> Any:
    namespace = {
        "API_KEY": OFFSET_FETCH_KEY,
        "API_VERSION": version,
        "RESPONSE_TYPE": _response_type(version),
        "SCHEMA": schema,
    }
    return type(f"OffsetFetchRequestV{version}", (RequestStruct,), namespace)


_V1 = _struct(1, OffsetFetchRequest_v1.SCHEMA)
_V2 = _struct(2, OffsetFetchRequest_v2.SCHEMA)
_V3 = _struct(3, OffsetFetchRequest_v3.SCHEMA)


class CommittedOffsetsRequest(Request[_V1 | _V2 | _V3]):  # type: ignore[misc]
    """OffsetFetch of one group for explicitly listed partitions."""

    API_KEY = OFFSET_FETCH_KEY

    def __init__(self, group: str, topics: list[tuple[str, list[int]]]) -> None:
        self.group = group
        self.topics = topics

    def build(self, request_struct_class: Any) -> Any:
        return request_struct_class(self.group, self.topics)


def read_offset_fetch(response: object) -> OffsetFetchAnswer:
    if not isinstance(response, OffsetFetchAnswer):
        raise TypeError(f"expected a decoded OffsetFetch answer, got {type(response).__name__}")
    return response


_V8_PARTITION = struct.Struct(">iqi")  # PartitionIndex, CommittedOffset, CommittedLeaderEpoch
# ... then Metadata as "" (length byte 1), ErrorCode, no tagged fields (0): what brokers usually send,
# i.e. "iqiBhB" per partition (see _usual_block)


@dataclass(frozen=True)
class GroupsOffsetAnswer:
    groups: dict[str, OffsetFetchAnswer]


@lru_cache(maxsize=64)
def _usual_block(count: int) -> struct.Struct:
    return struct.Struct(">" + "iqiBhB" * count)


def _v8_partitions(reader: WireReader, count: int) -> Block:
    """A topic's partitions: all of them with one unpack when every entry has the usual form (empty
    metadata, no tagged fields; checked on every entry), else entry by entry."""
    buf, start = reader.buf, reader.pos
    block = _usual_block(count)
    if start + block.size <= len(buf):
        flat = block.unpack_from(buf, start)
        if flat[3::6].count(1) == count and flat[5::6].count(0) == count:
            reader.pos = start + block.size
            return flat[0::6], flat[1::6], flat[4::6]
    entries = []
    for _ in range(count):
        index, offset, _epoch = _V8_PARTITION.unpack_from(buf, reader.pos)
        reader.pos += _V8_PARTITION.size
        length = max(reader.uvarint() - 1, 0)  # Metadata (compact nullable string), skipped; read first:
        reader.pos += length  # ``pos += uvarint()`` would add to the old position
        (error,) = INT16.unpack_from(buf, reader.pos)
        reader.pos += 2
        reader.skip_tags()
        entries.append((index, offset, error))
    return _columns(entries)


def _decode_v8_group(reader: WireReader) -> tuple[str, OffsetFetchAnswer]:
    group = reader.string(flexible=True)
    topics: dict[str, Block] = {}
    for _ in range(max(reader.uvarint() - 1, 0)):
        name = reader.string(flexible=True)
        _add(topics, name, _v8_partitions(reader, max(reader.uvarint() - 1, 0)))
        reader.skip_tags()
    (error_code,) = INT16.unpack_from(reader.buf, reader.pos)
    reader.pos += 2
    reader.skip_tags()
    return group, OffsetFetchAnswer(error_code, topics)


def decode_offset_fetch_v8(buf: bytes, pos: int) -> GroupsOffsetAnswer:
    reader = WireReader(buf, pos + 4)  # ThrottleTimeMs
    try:
        groups = dict(_decode_v8_group(reader) for _ in range(max(reader.uvarint() - 1, 0)))
        reader.skip_tags()
    except (struct.error, IndexError, ValueError) as exc:
        raise ValueError(f"OffsetFetch v8 response truncated: {exc}") from exc
    if reader.pos != len(buf):
        raise ValueError(f"OffsetFetch v8 response has {len(buf) - reader.pos} unread bytes")
    return GroupsOffsetAnswer(groups)


def _decode_v8(cls: type, data: BytesIO) -> GroupsOffsetAnswer:
    return decode_offset_fetch_v8(data.getvalue(), data.tell())


_V8_RESPONSE = type(
    "OffsetFetchResponseV8",
    (),
    {"API_KEY": OFFSET_FETCH_KEY, "API_VERSION": 8, "decode": classmethod(_decode_v8)},
)


class _Encoded:
    """A schema field whose value is already encoded: the v8 body repeats the same partition list for
    every group, so it is built once with ``struct`` instead of per value through aiokafka's types."""

    @staticmethod
    def encode(value: bytes) -> bytes:
        return value


def _compact_string(text: str) -> bytes:
    data = text.encode()
    return uvarint(len(data) + 1) + data


def offset_fetch_v8_body(groups: list[str], topics: list[tuple[str, list[int]]]) -> bytes:
    """Groups[{GroupId, Topics[{Name, PartitionIndexes}]}], RequireStable=false, no tagged fields."""
    topic_bytes = uvarint(len(topics) + 1) + b"".join(
        _compact_string(name) + uvarint(len(parts) + 1) + struct.pack(f">{len(parts)}i", *parts) + b"\x00"
        for name, parts in topics
    )
    groups_bytes = b"".join(_compact_string(group) + topic_bytes + b"\x00" for group in groups)
    return uvarint(len(groups) + 1) + groups_bytes + b"\x00" + b"\x00"


class OffsetFetchRequestV8(RequestStruct):  # type: ignore[misc]
    API_KEY = OFFSET_FETCH_KEY
    API_VERSION = 8
    FLEXIBLE_VERSION = True
    RESPONSE_TYPE = _V8_RESPONSE
    SCHEMA = Schema(("body", _Encoded))


class GroupsOffsetsRequest(Request[OffsetFetchRequestV8]):  # type: ignore[misc]
    """OffsetFetch v8 (KIP-709): several groups of one coordinator in one request, the same partitions
    for each. A broker without v8 raises before anything is sent."""

    API_KEY = OFFSET_FETCH_KEY

    def __init__(self, groups: list[str], topics: list[tuple[str, list[int]]]) -> None:
        self.groups = groups
        self.topics = topics

    def build(self, request_struct_class: Any) -> Any:
        return request_struct_class(offset_fetch_v8_body(self.groups, self.topics))


def read_groups_offsets(response: object) -> GroupsOffsetAnswer:
    if not isinstance(response, GroupsOffsetAnswer):
        raise TypeError(f"expected a decoded OffsetFetch v8 answer, got {type(response).__name__}")
    return response
