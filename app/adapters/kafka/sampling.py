"""Reading record timestamps around an offset (Fetch, read_uncommitted), for the preview's check of
out-of-order timestamps near a time-based cut. One Fetch per leader with all of its partitions.

Fetch needs READ on the topic, which the service's principal needs for nothing else: a partition whose
leader refuses it (TOPIC_AUTHORIZATION_FAILED) is left out, and its check is null in the preview.

``RecordSampling`` is mixed into ``KafkaClusters`` (it only needs that class's ``_metadata``)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from aiokafka.protocol.fetch import FetchRequest
from aiokafka.record.memory_records import MemoryRecords

from app.adapters.kafka.cluster_client import ClusterClient, unavailable
from app.adapters.kafka.codecs.topic_metadata import Metadata
from app.adapters.kafka.error_codes import ERROR_NAMES
from app.adapters.kafka.leaders import route
from app.adapters.kafka.topics import TopicQueryFailed, send_or_fail
from app.domain.ports import TopicPartition

PARTITION_MAX_BYTES = 64 * 1024
_READ_UNCOMMITTED = 0
UNREADABLE = "TOPIC_AUTHORIZATION_FAILED"


def _timestamps(records: bytes | None, start: int, limit: int) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    batches: Any = MemoryRecords(bytes(records or b""))
    while len(found) < limit and (batch := batches.next_batch()) is not None:
        for record in batch:
            if record.offset >= start:
                found.append((int(record.offset), int(record.timestamp)))
                if len(found) == limit:
                    break
    return found


async def _on_leader(
    client: ClusterClient, leader: int, starts: Mapping[TopicPartition, int], limit: int
) -> dict[TopicPartition, list[tuple[int, int]]]:
    by_topic: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for tp, start in starts.items():
        by_topic[tp.topic].append((tp.partition, start, PARTITION_MAX_BYTES))
    topics = sorted(by_topic.items())
    request = FetchRequest(0, 0, PARTITION_MAX_BYTES * len(starts), _READ_UNCOMMITTED, topics)
    response = await send_or_fail(client, leader, request)
    sampled: dict[TopicPartition, list[tuple[int, int]]] = {}
    for topic, parts in response.topics:
        for part in parts:
            tp = TopicPartition(str(topic), int(part[0]))
            if (error := ERROR_NAMES[int(part[1])]) == UNREADABLE:
                continue
            if error != "NONE":
                raise TopicQueryFailed(f"Fetch of {tp} on broker {leader}: {error}")
            sampled[tp] = _timestamps(part[-1], starts[tp], limit)
    return sampled


async def record_timestamps(
    client: ClusterClient, metadata: Metadata, starts: Mapping[TopicPartition, int], limit: int
) -> dict[TopicPartition, list[tuple[int, int]]]:
    """(offset, timestamp) of up to ``limit`` records from each start offset."""
    by_leader, failed = route(metadata, starts)
    if failed:
        tp, outcome = sorted(failed.items())[0]
        raise TopicQueryFailed(f"{len(failed)} partition(s) cannot be routed, e.g. {tp}: {outcome.error}")
    answers = await asyncio.gather(
        *(
            _on_leader(client, leader, {tp: starts[tp] for tp in tps}, limit)
            for leader, tps in by_leader.items()
        )
    )
    return {tp: found for answer in answers for tp, found in answer.items()}


class _Clusters(Protocol):
    async def _metadata(self, cluster: str, topics: Sequence[str]) -> tuple[ClusterClient, Metadata]: ...


class RecordSampling:
    async def record_timestamps(
        self: _Clusters, cluster: str, starts: Mapping[TopicPartition, int], *, limit: int
    ) -> dict[TopicPartition, list[tuple[int, int]]]:
        if not starts:
            return {}
        async with unavailable(cluster):
            client, metadata = await self._metadata(cluster, [tp.topic for tp in starts])
            return await record_timestamps(client, metadata, starts, limit)
