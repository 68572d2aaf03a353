"""Moves a partition's leadership to another in-sync replica, the way an operator does on Kafka:
AlterPartitionReassignments puts the new leader first in the replica list (same replicas, no data
moves), then a preferred leader election (confluent-kafka's ``elect_leaders``) makes it the leader. On
the emulator its control API does the same in one call. Neither stops a broker."""

from __future__ import annotations

import asyncio
import io
import struct

import httpx
from aiokafka.protocol.types import (
    CompactArray,
    CompactString,
    Int16,
    Int32,
    Schema,
    TaggedFields,
)
from confluent_kafka import ElectionType, TopicPartition
from confluent_kafka.admin import AdminClient

from helpers.referee.session import Session

ALTER_PARTITION_REASSIGNMENTS = 45
REQUEST = Schema(
    ("timeout_ms", Int32),
    (
        "topics",
        CompactArray(
            ("name", CompactString("utf-8")),
            (
                "partitions",
                CompactArray(("index", Int32), ("replicas", CompactArray(Int32)), ("tags", TaggedFields)),
            ),
            ("tags", TaggedFields),
        ),
    ),
    ("tags", TaggedFields),
)
RESPONSE = Schema(
    ("throttle_time_ms", Int32),
    ("error_code", Int16),
    ("error_message", CompactString("utf-8")),
    (
        "responses",
        CompactArray(
            ("name", CompactString("utf-8")),
            (
                "partitions",
                CompactArray(
                    ("index", Int32),
                    ("error_code", Int16),
                    ("error_message", CompactString("utf-8")),
                    ("tags", TaggedFields),
                ),
            ),
            ("tags", TaggedFields),
        ),
    ),
    ("tags", TaggedFields),
)


async def move_leader(s: Session, partition: int, broker: int) -> None:
    if s.target.control is not None:
        body = {"broker": broker}
        url = f"{s.target.control}/topics/{s.topic}/partitions/{partition}/leader"
        await asyncio.to_thread(lambda: httpx.post(url, json=body, timeout=30).raise_for_status())
        return
    replicas = [int(r) for r in (await s.partitions())[partition]["ReplicaNodes"]]
    await _reassign(s, partition, [broker, *(r for r in replicas if r != broker)])
    admin = AdminClient(s.target.confluent_config())
    elected = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(s.topic, partition)])
    await asyncio.to_thread(elected.result, 60)


async def _reassign(s: Session, partition: int, replicas: list[int]) -> None:
    """Raw AlterPartitionReassignments v0 (the emulator's codec does not carry this API's schema)."""
    connection = await s.raw()
    correlation = connection.next_correlation()
    client = b"referee"
    header = (
        struct.pack(">hhih", ALTER_PARTITION_REASSIGNMENTS, 0, correlation, len(client)) + client + b"\x00"
    )
    topics = [(s.topic, [(partition, replicas, {})], {})]
    await connection.send_frame(header + REQUEST.encode([30_000, topics, {}]))
    frame = await connection.read_frame()
    assert frame is not None
    assert struct.unpack_from(">i", frame)[0] == correlation
    answer = RESPONSE.decode(io.BytesIO(frame[5:]))  # correlation id, then the header's empty tags
    errors = [answer[1], *(p[1] for t in answer[3] for p in t[1])]
    assert set(errors) == {0}, answer
