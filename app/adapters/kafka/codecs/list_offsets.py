"""ListOffsets (the versions aiokafka sends), encoded and decoded here.

A preview asks every leader for the log start offset and the high watermark of all its partitions:
20,000 entries per preview of a 10,000-partition topic, and accepting a deletion of 10,000 concrete
offsets asks every leader for its high watermarks. aiokafka's generic codec writes and reads them one
field at a time (about 10 ms to encode 10,000 entries, ~0.1 s to decode a preview's). Here each
topic's entries (fixed size) are written and read with one ``struct`` call each: the same bytes,
column tuples out.

``list_offsets_request`` builds one leader's request from partitions; ``read_list_offsets`` reads every
partition of its answer as (error name, offset).
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from io import BytesIO
from itertools import chain
from typing import Any

from aiokafka.protocol.offset import OffsetRequest

from app.adapters.kafka.error_codes import ERROR_NAMES
from app.domain.ports import TopicPartition

LIST_OFFSETS_KEY = 2
LATEST = -1
EARLIEST = -2
_CONSUMER_REPLICA_ID = -1
READ_UNCOMMITTED, READ_COMMITTED = 0, 1  # ListOffsets' isolation levels
_INT8 = struct.Struct(">b")
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
# PartitionIndex, ErrorCode, Timestamp, Offset (+ LeaderEpoch from v4); v0 has an offsets array instead
_ENTRY = {1: "ihqq", 2: "ihqq", 3: "ihqq", 4: "ihqqi", 5: "ihqqi"}

# A request's partition entry: PartitionIndex, Timestamp (+ MaxNumOffsets in v0)
_REQUEST_ENTRY = {0: "iqi", 1: "iq", 2: "iq", 3: "iq"}

# One topic: partition indexes, error codes, offsets (same order)
Columns = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class ListOffsetsAnswer:
    topics: dict[str, list[Columns]]


@lru_cache(maxsize=64)
def _block(entry: str, count: int) -> struct.Struct:
    return struct.Struct(">" + entry * count)


def _v0_partitions(buf: bytes, pos: int, count: int) -> tuple[Columns, int]:
    indexes, errors, offsets = [], [], []
    for _ in range(count):
        (index,) = _INT32.unpack_from(buf, pos)
        (error,) = _INT16.unpack_from(buf, pos + 4)
        (found,) = _INT32.unpack_from(buf, pos + 6)
        pos += 10
        offsets.append(_INT64.unpack_from(buf, pos)[0] if found > 0 else -1)
        pos += 8 * max(found, 0)
        indexes.append(index)
        errors.append(error)
    return (tuple(indexes), tuple(errors), tuple(offsets)), pos


def decode_list_offsets(buf: bytes, pos: int, version: int) -> ListOffsetsAnswer:
    topics: dict[str, list[Columns]] = {}
    try:
        if version >= 2:
            pos += 4  # ThrottleTimeMs
        (count_topics,) = _INT32.unpack_from(buf, pos)
        pos += 4
        for _ in range(max(count_topics, 0)):
            (length,) = _INT16.unpack_from(buf, pos)
            name = buf[pos + 2 : pos + 2 + length].decode()
            pos += 2 + max(length, 0)
            (count,) = _INT32.unpack_from(buf, pos)
            pos += 4
            count = max(count, 0)
            if version == 0:
                columns, pos = _v0_partitions(buf, pos, count)
            else:
                entry = _ENTRY[version]
                block = _block(entry, count)
                flat = block.unpack_from(buf, pos)
                pos += block.size
                step = len(entry)
                columns = flat[0::step], flat[1::step], flat[3::step]
            topics.setdefault(name, []).append(columns)
    except struct.error as exc:
        raise ValueError(f"ListOffsets response truncated: {exc}") from exc
    if pos != len(buf):
        raise ValueError(f"ListOffsets response has {len(buf) - pos} unread bytes")
    return ListOffsetsAnswer(topics)


def _response_type(version: int) -> type:
    def decode(cls: type, data: BytesIO) -> ListOffsetsAnswer:
        return decode_list_offsets(data.getvalue(), data.tell(), version)

    namespace = {"API_KEY": LIST_OFFSETS_KEY, "API_VERSION": version, "decode": classmethod(decode)}
    return type(f"ListOffsetsResponseV{version}", (), namespace)


def _encode(request: Any) -> bytes:
    """The request body, byte for byte what aiokafka's schema writes (``topics``: (name, [(partition,
    timestamp[, max offsets])]))."""
    version = request.API_VERSION
    out = [_INT32.pack(request.replica_id)]
    if version >= 2:
        out.append(_INT8.pack(request.isolation_level))
    out.append(_INT32.pack(len(request.topics)))
    entry = _REQUEST_ENTRY[version]
    for name, partitions in request.topics:
        raw = name.encode()
        out.append(_INT16.pack(len(raw)) + raw + _INT32.pack(len(partitions)))
        out.append(_block(entry, len(partitions)).pack(*chain.from_iterable(partitions)))
    return b"".join(out)


def _with_own_response(request_struct: Any) -> Any:
    version = request_struct.API_VERSION
    namespace = {"RESPONSE_TYPE": _response_type(version), "encode": _encode}
    return type(request_struct.__name__, (request_struct,), namespace)


class ListOffsetsRequest(OffsetRequest):  # type: ignore[misc]
    """aiokafka's ListOffsets request (same versions, same bytes, encoded here); answers decode to
    ListOffsetsAnswer."""


# Set after the class exists: aiokafka's ``Request.__init_subclass__`` fills ``_CLASSES`` from the
# generic base, which this subclass inherits from OffsetRequest.
ListOffsetsRequest._CLASSES = tuple(_with_own_response(c) for c in OffsetRequest._CLASSES)


def read_answer(response: object) -> ListOffsetsAnswer:
    if not isinstance(response, ListOffsetsAnswer):
        raise TypeError(f"expected a decoded ListOffsets answer, got {type(response).__name__}")
    return response


def list_offsets_request(
    partitions: Iterable[TopicPartition], timestamp: int, isolation: int = READ_UNCOMMITTED
) -> Any:
    """ListOffsets for one broker; LATEST answers the high watermark (read_uncommitted) or the last
    stable offset (read_committed: the first offset of the oldest open transaction), EARLIEST the log
    start offset."""
    by_topic: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for tp in partitions:
        by_topic[tp.topic].append((tp.partition, timestamp))
    topics = [(name, sorted(parts)) for name, parts in sorted(by_topic.items())]
    return ListOffsetsRequest(_CONSUMER_REPLICA_ID, isolation, topics)


def read_list_offsets(response: Any) -> dict[TopicPartition, tuple[str, int]]:
    """Every partition of a ListOffsets response: (error name, offset)."""
    results: dict[TopicPartition, tuple[str, int]] = {}
    names: dict[int, str] = {}
    for topic, parts in read_answer(response).topics.items():
        for indexes, errors, offsets in parts:
            for code in set(errors) - names.keys():
                names[code] = ERROR_NAMES[code]
            results.update(
                (TopicPartition(topic, index), (names[code], offset))
                for index, code, offset in zip(indexes, errors, offsets, strict=True)
            )
    return results
