"""The consumer protocol's embedded bytes in DescribeGroups: ``MemberMetadata`` (a subscription) and
``MemberAssignment``, each an int16 version followed by a non-flexible struct.

Newer versions are read with the current layout and their trailing fields ignored, as Kafka's schema
comment prescribes; anything that does not parse yields an empty result instead of an error (a group
of another protocol type may carry arbitrary bytes there).
"""

from __future__ import annotations

import struct

from app.domain.ports import TopicPartition

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


class _Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def _unpack(self, layout: struct.Struct) -> int:
        (value,) = layout.unpack_from(self.buf, self.pos)
        self.pos += layout.size
        return int(value)

    def int16(self) -> int:
        return self._unpack(_INT16)

    def int32(self) -> int:
        return self._unpack(_INT32)

    def string(self) -> str:
        length = self.int16()
        if length < 0:
            return ""
        start, self.pos = self.pos, self.pos + length
        if self.pos > len(self.buf):
            raise ValueError("string runs past the end")
        return self.buf[start : self.pos].decode()

    def count(self) -> int:
        value = self.int32()
        if value < 0 or value > len(self.buf):
            raise ValueError("array length out of range")
        return value


def subscribed_topics(metadata: bytes) -> tuple[str, ...]:
    """The topics of a ``ConsumerProtocolSubscription`` (any version); () when not decodable."""
    if len(metadata) < 2:
        return ()
    reader = _Reader(metadata)
    try:
        reader.int16()  # version
        return tuple(reader.string() for _ in range(reader.count()))
    except (struct.error, ValueError, UnicodeDecodeError):
        return ()


def assigned_partitions(assignment: bytes) -> tuple[TopicPartition, ...]:
    """The partitions of a ``ConsumerProtocolAssignment`` (any version); () when not decodable."""
    if len(assignment) < 2:
        return ()
    reader = _Reader(assignment)
    try:
        reader.int16()  # version
        partitions: list[TopicPartition] = []
        for _ in range(reader.count()):
            topic = reader.string()
            partitions.extend(TopicPartition(topic, reader.int32()) for _ in range(reader.count()))
        return tuple(partitions)
    except (struct.error, ValueError, UnicodeDecodeError):
        return ()
