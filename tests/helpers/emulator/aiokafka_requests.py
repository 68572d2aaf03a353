"""Low-level requests sent with aiokafka's own protocol classes through ``AIOKafkaClient.send``.

aiokafka negotiates a version per request; conformance tests pin one with ``Pinned``. aiokafka knows
DeleteRecords v0-v2 only, so v3 (LeaderOnly KIP draft) is declared here with aiokafka's schema types.
"""

from __future__ import annotations

from typing import Any

from aiokafka import AIOKafkaClient
from aiokafka.protocol.admin import (
    DeleteRecordsRequest_v0,
    DeleteRecordsRequest_v1,
    DeleteRecordsRequest_v2,
)
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.fetch import FetchRequest_v4, FetchRequest_v5
from aiokafka.protocol.offset import OffsetRequest_v1, OffsetRequest_v2
from aiokafka.protocol.types import (
    Boolean,
    CompactArray,
    CompactString,
    Int16,
    Int32,
    Int64,
    Schema,
    TaggedFields,
)


class DeleteRecordsResponseV3(Response):
    API_KEY = 21
    API_VERSION = 3
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        (
            "topics",
            CompactArray(
                ("name", CompactString("utf-8")),
                (
                    "partitions",
                    CompactArray(
                        ("partition_index", Int32),
                        ("low_watermark", Int64),
                        ("leader_log_start_offset", Int64),
                        ("error_code", Int16),
                        ("tags", TaggedFields),
                    ),
                ),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class DeleteRecordsRequestV3(RequestStruct):
    API_KEY = 21
    API_VERSION = 3
    FLEXIBLE_VERSION = True
    RESPONSE_TYPE = DeleteRecordsResponseV3
    SCHEMA = Schema(
        (
            "topics",
            CompactArray(
                ("name", CompactString("utf-8")),
                (
                    "partitions",
                    CompactArray(("partition_index", Int32), ("offset", Int64), ("tags", TaggedFields)),
                ),
                ("tags", TaggedFields),
            ),
        ),
        ("timeout_ms", Int32),
        ("leader_only", Boolean),
        ("tags", TaggedFields),
    )


class Pinned(Request[RequestStruct]):
    """Sends exactly the given struct, whatever versions the broker advertises."""

    API_KEY = -1

    def __init__(self, struct: RequestStruct) -> None:
        self._struct = struct

    def build(self, request_struct_class: type[RequestStruct]) -> RequestStruct:
        return self._struct

    def prepare(self, versions: dict[int, tuple[int, int]]) -> RequestStruct:
        return self._struct


Offsets = list[tuple[str, int, int]]


def _grouped(offsets: Offsets) -> dict[str, list[tuple[int, int]]]:
    topics: dict[str, list[tuple[int, int]]] = {}
    for topic, partition, value in offsets:
        topics.setdefault(topic, []).append((partition, value))
    return topics


async def delete_records(
    client: AIOKafkaClient,
    node: int,
    offsets: Offsets,
    version: int,
    timeout_ms: int = 5000,
    leader_only: bool = False,
) -> dict[tuple[str, int], tuple[int, ...]]:
    """(topic, partition) -> (error, low watermark[, leader log start offset for v3])."""
    topics = _grouped(offsets)
    if version == 3:
        struct: RequestStruct = DeleteRecordsRequestV3(
            [(t, [(p, o, {}) for p, o in parts], {}) for t, parts in topics.items()],
            timeout_ms,
            leader_only,
            {},
        )
    elif version == 2:
        struct = DeleteRecordsRequest_v2(
            [(t, [(p, o, {}) for p, o in parts], {}) for t, parts in topics.items()], timeout_ms, {}
        )
    else:
        cls = DeleteRecordsRequest_v1 if version == 1 else DeleteRecordsRequest_v0
        struct = cls(list(topics.items()), timeout_ms)
    response: Any = await client.send(node, Pinned(struct))
    result: dict[tuple[str, int], tuple[int, ...]] = {}
    for topic in response.topics:
        for part in topic[1]:
            if version == 3:
                result[(topic[0], part[0])] = (part[3], part[1], part[2])
            else:
                result[(topic[0], part[0])] = (part[2], part[1])
    return result


async def list_offsets(
    client: AIOKafkaClient, node: int, queries: Offsets, version: int = 1
) -> dict[tuple[str, int], tuple[int, int, int]]:
    """(topic, partition) -> (error, timestamp, offset) for ListOffsets v1 or v2.

    (aiokafka's v4 struct declares CurrentLeaderEpoch as int64 instead of int32, so it is not used.)
    """
    topics = _grouped(queries)
    if version == 2:
        struct: RequestStruct = OffsetRequest_v2(-1, 0, list(topics.items()))
    else:
        struct = OffsetRequest_v1(-1, list(topics.items()))
    response: Any = await client.send(node, Pinned(struct))
    return {
        (topic[0], part[0]): (part[1], part[2], part[3]) for topic in response.topics for part in topic[1]
    }


async def fetch(
    client: AIOKafkaClient,
    node: int,
    topic: str,
    partition: int,
    offset: int,
    max_wait_ms: int = 0,
    version: int = 5,
    max_bytes: int = 1 << 20,
) -> dict[str, Any]:
    """One partition's Fetch answer: error, high watermark, log start offset (v5), record bytes."""
    if version == 4:
        struct: RequestStruct = FetchRequest_v4(
            -1, max_wait_ms, 1, 1 << 20, 0, [(topic, [(partition, offset, max_bytes)])]
        )
    else:
        struct = FetchRequest_v5(
            -1, max_wait_ms, 1, 1 << 20, 0, [(topic, [(partition, offset, -1, max_bytes)])]
        )
    response: Any = await client.send(node, Pinned(struct))
    part = response.topics[0][1][0]
    answer = {"error": part[1], "high_watermark": part[2], "last_stable_offset": part[3], "records": part[-1]}
    if version >= 5:
        answer["log_start_offset"] = part[4]
    return answer
