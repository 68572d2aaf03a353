"""The read-only part of the ``KafkaGateway`` that offset specs, the offsets view and previews need:
timestamps, topic layouts and configs, broker versions, consumer groups.

``ClusterInspection`` is mixed into ``KafkaClusters`` (it only needs that class's ``_metadata``). A
cluster that cannot be reached or a fact that cannot be read completely is a ``ServiceUnavailable``:
callers never decide on partial data.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Protocol

from app.adapters.kafka.client import ClusterClient, ClusterUnreachable
from app.adapters.kafka.groups import (
    GroupQueryFailed,
    committed_offsets_of_groups,
    describe_groups,
    list_groups,
)
from app.adapters.kafka.metadata import Metadata
from app.adapters.kafka.sampling import record_timestamps
from app.adapters.kafka.topic_info import (
    INTERNAL_TOPICS,
    TopicQueryFailed,
    delete_records_versions,
    offsets_for_times,
    topic_configs,
)
from app.domain.ports import GroupInfo, PartitionPlacement, TimeOffset, TopicLayout, TopicPartition
from app.errors import ServiceUnavailable


class _HasMetadata(Protocol):
    async def _metadata(self, cluster: str, topics: Sequence[str]) -> tuple[ClusterClient, Metadata]: ...


@asynccontextmanager
async def _unavailable(cluster: str) -> AsyncIterator[None]:
    try:
        yield
    except (ClusterUnreachable, GroupQueryFailed, TopicQueryFailed) as exc:
        raise ServiceUnavailable(f"cluster {cluster!r}: {exc}") from exc


class ClusterInspection:
    async def offsets_for_times(
        self: _HasMetadata, cluster: str, times: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, TimeOffset]:
        if not times:
            return {}
        async with _unavailable(cluster):
            client, metadata = await self._metadata(cluster, [tp.topic for tp in times])
            return await offsets_for_times(client, metadata, times)

    async def topic_layouts(
        self: _HasMetadata, cluster: str, topics: Sequence[str]
    ) -> dict[str, TopicLayout]:
        async with _unavailable(cluster):
            _, metadata = await self._metadata(cluster, topics)
        return {
            name: TopicLayout(
                name=name,
                internal=name in INTERNAL_TOPICS,
                partitions={
                    index: PartitionPlacement(p.leader, tuple(p.replicas))
                    for index, p in topic.partitions.items()
                },
            )
            for name, topic in metadata.topics.items()
            if topic.error == "NONE" and name in topics
        }

    async def topic_configs(
        self: _HasMetadata, cluster: str, topics: Sequence[str], names: Sequence[str]
    ) -> dict[str, dict[str, str]]:
        async with _unavailable(cluster):
            client, metadata = await self._metadata(cluster, [])
            return await topic_configs(client, metadata.brokers, topics, names)

    async def delete_records_versions(self: _HasMetadata, cluster: str) -> dict[int, int]:
        async with _unavailable(cluster):
            client, metadata = await self._metadata(cluster, [])
            return await delete_records_versions(client, metadata.brokers)

    async def record_timestamps(
        self: _HasMetadata, cluster: str, starts: Mapping[TopicPartition, int], *, limit: int
    ) -> dict[TopicPartition, list[tuple[int, int]]]:
        if not starts:
            return {}
        async with _unavailable(cluster):
            client, metadata = await self._metadata(cluster, [tp.topic for tp in starts])
            return await record_timestamps(client, metadata, starts, limit)

    async def list_groups(self: _HasMetadata, cluster: str) -> list[str]:
        async with _unavailable(cluster):
            client, metadata = await self._metadata(cluster, [])
            return await list_groups(client, metadata.brokers)

    async def describe_groups(
        self: _HasMetadata, cluster: str, groups: Sequence[str]
    ) -> dict[str, GroupInfo]:
        async with _unavailable(cluster):
            client, metadata = await self._metadata(cluster, [])
            return await describe_groups(client, metadata.brokers, groups)

    async def committed_offsets(
        self: _HasMetadata, cluster: str, groups: Sequence[str], partitions: Sequence[TopicPartition]
    ) -> dict[str, dict[TopicPartition, int]]:
        if not groups or not partitions:
            return {group: {} for group in groups}
        async with _unavailable(cluster):
            client, metadata = await self._metadata(cluster, [])
            return await committed_offsets_of_groups(client, metadata.brokers, groups, partitions)
