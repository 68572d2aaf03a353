"""Metadata (API key 3) v1-v5 with a response decoder made for big topics, and the typed view it builds.

aiokafka decodes every field through generic per-field objects; for a 10,000-partition topic that is
most of the client's time in a DeleteRecords round: about 73 ms per answer, against about 10 ms for the
decoder here, which reads the same bytes with precompiled ``struct`` formats and builds the typed
``Metadata`` view directly (aiokafka hands whatever ``RESPONSE_TYPE.decode`` returns back to the
caller). Versions 1-5 are the non-flexible ones every broker since Kafka 0.10 answers; the request is
aiokafka's own schema.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from io import BytesIO
from typing import Any, NamedTuple

from aiokafka.protocol.api import Request, RequestStruct
from aiokafka.protocol.metadata import MetadataRequest_v1, MetadataRequest_v4

from app.adapters.kafka.codecs.wire import INT32, WireReader
from app.adapters.kafka.error_codes import ERROR_NAMES

METADATA_KEY = 3
_PARTITION_HEAD = struct.Struct(">hiii")  # ErrorCode, PartitionIndex, LeaderId, len(ReplicaNodes)
_TOPIC_HEAD = struct.Struct(">h")


class PartitionMetadata(NamedTuple):
    """A tuple: built once per partition of every topic asked about, so it must be cheap."""

    leader: int
    replicas: tuple[int, ...]
    error: str


@dataclass(frozen=True)
class TopicMetadata:
    error: str
    partitions: dict[int, PartitionMetadata]


@dataclass(frozen=True)
class Metadata:
    brokers: tuple[int, ...]
    topics: dict[str, TopicMetadata]


class _Reader(WireReader):
    __slots__ = ()

    def partitions(self, count: int, version: int) -> dict[int, PartitionMetadata]:
        """``count`` partitions by index, in one loop with what it calls bound to locals: a 10,000-partition
        topic is read in about a third of the time a method call per partition takes."""
        buf, pos = self.buf, self.pos
        head, head_size, int32 = _PARTITION_HEAD.unpack_from, _PARTITION_HEAD.size, INT32.unpack_from
        replica_lists = _int32s
        flagged_offline = version >= 5
        partitions: dict[int, PartitionMetadata] = {}
        for _ in range(count):
            error, index, leader, replica_count = head(buf, pos)
            pos += head_size
            replicas: tuple[int, ...] = ()
            if replica_count > 0:
                replicas = replica_lists(replica_count).unpack_from(buf, pos)
                pos += 4 * replica_count
            (isr,) = int32(buf, pos)
            pos += 4 + 4 * max(isr, 0)
            if flagged_offline:
                (offline,) = int32(buf, pos)
                pos += 4 + 4 * max(offline, 0)
            partitions[index] = PartitionMetadata(leader, replicas, ERROR_NAMES[error])
        self.pos = pos
        return partitions


@lru_cache(maxsize=64)
def _int32s(count: int) -> struct.Struct:
    return struct.Struct(f">{count}i")


def decode_metadata(buf: bytes, pos: int, version: int) -> Metadata:
    """A Metadata response body (after the response header) at ``version`` 1-5."""
    try:
        return _decode(_Reader(buf, pos), version)
    except (struct.error, IndexError, ValueError) as exc:
        raise ValueError(f"metadata response truncated: {exc}") from exc


def _decode(reader: _Reader, version: int) -> Metadata:
    buf = reader.buf
    if version >= 3:
        reader.int32()  # ThrottleTimeMs
    brokers = []
    for _ in range(reader.int32()):
        brokers.append(reader.int32())  # NodeId
        reader.nullable_string()  # Host
        reader.int32()  # Port
        reader.nullable_string()  # Rack
    if version >= 2:
        reader.nullable_string()  # ClusterId
    reader.int32()  # ControllerId
    topics: dict[str, TopicMetadata] = {}
    for _ in range(max(reader.int32(), 0)):
        error = reader.int16()
        name = reader.nullable_string() or ""
        reader.pos += 1  # IsInternal
        partitions = reader.partitions(max(reader.int32(), 0), version)
        topics[name] = TopicMetadata(ERROR_NAMES[error], partitions)
    if reader.pos != len(buf):
        raise ValueError(f"metadata response has {len(buf) - reader.pos} unread bytes")
    return Metadata(tuple(brokers), topics)


def _response_type(version: int) -> type:
    def decode(cls: type, data: BytesIO) -> Metadata:
        return decode_metadata(data.getvalue(), data.tell(), version)

    namespace = {"API_KEY": METADATA_KEY, "API_VERSION": version, "decode": classmethod(decode)}
    return type(f"MetadataResponseV{version}", (), namespace)


def _request_struct(version: int, schema: Any) -> Any:
    namespace = {
        "API_KEY": METADATA_KEY,
        "API_VERSION": version,
        "RESPONSE_TYPE": _response_type(version),
        "SCHEMA": schema,
    }
    return type(f"MetadataRequestV{version}", (RequestStruct,), namespace)


_STRUCTS = {
    version: _request_struct(version, MetadataRequest_v1.SCHEMA if version < 4 else MetadataRequest_v4.SCHEMA)
    for version in range(1, 6)
}
_V1, _V2, _V3, _V4, _V5 = (_STRUCTS[v] for v in range(1, 6))


class TopicMetadataRequest(Request[_V1 | _V2 | _V3 | _V4 | _V5]):  # type: ignore[misc]
    """Metadata for exactly these topics (an empty list: brokers only), never creating a topic."""

    API_KEY = METADATA_KEY

    def __init__(self, topics: Sequence[str]) -> None:
        self.topics = list(topics)

    def build(self, request_struct_class: Any) -> Any:
        if request_struct_class.API_VERSION >= 4:
            return request_struct_class(self.topics, False)
        return request_struct_class(self.topics)


class AllTopicsMetadataRequest(TopicMetadataRequest):
    """Metadata with a null topic array: every topic (v1+), still never auto-creating one."""

    def __init__(self) -> None:
        super().__init__([])
        self.topics = None  # type: ignore[assignment]
