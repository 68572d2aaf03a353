"""The consumer protocol's embedded bytes in DescribeGroups: ``MemberMetadata`` (a subscription) and
``MemberAssignment``, each an int16 version followed by a non-flexible struct.

Newer versions are read with the current layout and their trailing fields ignored, as Kafka's schema
comment prescribes; anything that does not parse yields an empty result instead of an error (a group
of another protocol type may carry arbitrary bytes there).
"""

from __future__ import annotations

import struct

from app.adapters.kafka.codecs.wire import WireReader
from app.domain.ports import TopicPartition


def _count(reader: WireReader) -> int:
    """An array length, refused when it cannot be right (these bytes may be another protocol's)."""
    value = reader.int32()
    if value < 0 or value > len(reader.buf):
        raise ValueError("array length out of range")
    return value


def subscribed_topics(metadata: bytes) -> tuple[str, ...]:
    """The topics of a ``ConsumerProtocolSubscription`` (any version); () when not decodable."""
    if len(metadata) < 2:
        return ()
    reader = WireReader(metadata)
    try:
        reader.int16()  # version
        return tuple(reader.string() for _ in range(_count(reader)))
    except (struct.error, ValueError, UnicodeDecodeError):
        return ()


def assigned_partitions(assignment: bytes) -> tuple[TopicPartition, ...]:
    """The partitions of a ``ConsumerProtocolAssignment`` (any version); () when not decodable."""
    if len(assignment) < 2:
        return ()
    reader = WireReader(assignment)
    try:
        reader.int16()  # version
        partitions: list[TopicPartition] = []
        for _ in range(_count(reader)):
            topic = reader.string()
            partitions.extend(TopicPartition(topic, reader.int32()) for _ in range(_count(reader)))
        return tuple(partitions)
    except (struct.error, ValueError, UnicodeDecodeError):
        return ()
