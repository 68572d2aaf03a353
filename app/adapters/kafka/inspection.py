"""The read-only part of the ``KafkaGateway`` that offset specs, the offsets view and previews need:
timestamps, topic layouts and configs, broker versions, consumer groups.

``ClusterInspection`` is mixed into ``KafkaClusters`` (it only needs that class's ``_metadata``). A
cluster that cannot be reached or a fact that cannot be read completely is a ``ServiceUnavailable``:
callers never decide on partial data.
"""

from __future__ import annotations

import time
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
from app.adapters.kafka.metadata import Metadata, TopicMetadata
from app.adapters.kafka.recent import RecentTopics, SingleFlight
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
    _recent: Mapping[str, RecentTopics]
    _shared_groups: SingleFlight[str, list[str]]

    async def _metadata(self, cluster: str, topics: Sequence[str]) -> tuple[ClusterClient, Metadata]: ...

    async def _recent_topics(self, cluster: str, topics: Sequence[str]) -> dict[str, TopicMetadata]: ...

    async def _client(self, cluster: str) -> ClusterClient: ...


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
        self: _HasMetadata, cluster: str, topics: Sequence[str], *, recent: bool = False
    ) -> dict[str, TopicLayout]:
        async with _unavailable(cluster):
            if recent:
                answered = await self._recent_topics(cluster, topics)
            else:
                answered = (await self._metadata(cluster, topics))[1].topics
        return {
            name: TopicLayout(
                name=name,
                internal=name in INTERNAL_TOPICS,
                partitions={
                    index: PartitionPlacement(p.leader, p.replicas) for index, p in topic.partitions.items()
                },
            )
            for name, topic in answered.items()
            if topic.error == "NONE" and name in topics
        }

    async def topic_configs(
        self: _HasMetadata, cluster: str, topics: Sequence[str], names: Sequence[str], *, recent: bool = False
    ) -> dict[str, dict[str, str]]:
        """Any broker answers DescribeConfigs for topics: the client's brokers are tried in turn, no
        Metadata needed."""
        memory = self._recent.get(cluster)
        if recent and memory is not None and (known := memory.configs(topics, names)) is not None:
            return known
        async with _unavailable(cluster):
            client = await self._client(cluster)
            asked_at = time.monotonic()
            configs = await topic_configs(client, topics, names)
        if memory is not None:
            memory.learn_configs(asked_at, names, configs)
        return configs

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
        """Callers asking while a listing is in flight share it: its ListGroups were sent at most one
        round trip before they asked (no answer is kept once it is in)."""

        async def listing() -> list[str]:
            async with _unavailable(cluster):
                client, metadata = await self._metadata(cluster, [])
                return await list_groups(client, metadata.brokers)

        return await self._shared_groups.run(cluster, listing)

    # Describing groups and reading their offsets goes to each group's coordinator; FindCoordinator may be
    # asked of any broker, so the client's brokers serve and no Metadata is needed.
    async def describe_groups(
        self: _HasMetadata, cluster: str, groups: Sequence[str]
    ) -> dict[str, GroupInfo]:
        async with _unavailable(cluster):
            client = await self._client(cluster)
            return await describe_groups(client, client.nodes(), groups)

    async def committed_offsets(
        self: _HasMetadata, cluster: str, groups: Sequence[str], partitions: Sequence[TopicPartition]
    ) -> dict[str, Mapping[TopicPartition, int]]:
        if not groups or not partitions:
            return {group: {} for group in groups}
        async with _unavailable(cluster):
            client = await self._client(cluster)
            return await committed_offsets_of_groups(client, client.nodes(), groups, partitions)
