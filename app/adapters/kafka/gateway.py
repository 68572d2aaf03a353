"""``KafkaClusters``: the ``KafkaGateway`` over every configured cluster.

Batching follows Kafka's Admin client: metadata for the requested topics, partitions grouped by leader,
one request per leader carrying all of that leader's partitions, leaders in parallel, and every
partition's result read from the response (``leaders.py``). A leader that fails affects only its own
partitions: each gets an outcome, nothing is raised. Consumer groups (``group_queries.py``), topic facts
(``topics.py``) and record timestamps (``sampling.py``) are mixed in.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from functools import partial

from app.adapters.kafka.cluster_client import ClusterClient, ClusterUnreachable, SingleFlight
from app.adapters.kafka.codecs.list_offsets import EARLIEST, LATEST, READ_COMMITTED, READ_UNCOMMITTED
from app.adapters.kafka.codecs.topic_metadata import Metadata, TopicMetadata
from app.adapters.kafka.group_queries import ConsumerGroups
from app.adapters.kafka.leaders import (
    delete_on_leaders,
    judge_out_of_range,
    offsets_on_leaders,
    out_of_range,
    outcomes_of,
)
from app.adapters.kafka.sampling import RecordSampling
from app.adapters.kafka.topics import RecentTopics, TopicFacts
from app.domain.ports import PartitionOutcome, TopicPartition
from app.errors import ClusterNotFound, ServiceUnavailable
from app.settings import ClusterSettings

log = logging.getLogger(__name__)

PING_TIMEOUT_S = 5.0


class KafkaClusters(ConsumerGroups, TopicFacts, RecordSampling):
    """One lazily started aiokafka client per configured cluster."""

    def __init__(self, clusters: Mapping[str, ClusterSettings]) -> None:
        self._settings = dict(clusters)
        self._clients: dict[str, ClusterClient] = {}
        self._locks = {name: asyncio.Lock() for name in self._settings}
        self._shared_metadata: SingleFlight[tuple[str, tuple[str, ...]], tuple[ClusterClient, Metadata]] = (
            SingleFlight()
        )
        self._shared_groups: SingleFlight[str, list[str]] = SingleFlight()
        self._warming: list[asyncio.Task[None]] = []
        self._recent = {
            name: RecentTopics(settings.metadata_max_age_ms / 1000)
            for name, settings in self._settings.items()
        }

    def has_cluster(self, cluster: str) -> bool:
        return cluster in self._settings

    async def start(self) -> None:
        """Connect to every cluster's brokers in the background, so the first request after a start does
        not wait for connections; a cluster that is down cannot stop the service (its client connects on
        first use then)."""
        self._warming = [
            asyncio.create_task(self._warm(name), name=f"connect {name}") for name in self._settings
        ]

    async def _warm(self, cluster: str) -> None:
        try:
            client = await self._client(cluster)
            await client.connect_all()
        except Exception as exc:  # any request retries the connection
            log.info("cluster %r: not connected at start-up: %s", cluster, exc)

    async def close(self) -> None:
        for task in self._warming:
            task.cancel()
        await asyncio.gather(*self._warming, return_exceptions=True)
        clients, self._clients = list(self._clients.values()), {}
        await asyncio.gather(*(client.close() for client in clients))

    async def _client(self, cluster: str) -> ClusterClient:
        if cluster not in self._settings:
            raise ClusterNotFound(f"Unknown cluster {cluster!r}")
        async with self._locks[cluster]:
            client = self._clients.get(cluster)
            if client is None:
                client = ClusterClient(cluster, self._settings[cluster])
                await client.start()
                self._clients[cluster] = client
            return client

    async def _metadata(self, cluster: str, topics: Sequence[str]) -> tuple[ClusterClient, Metadata]:
        """Fresh metadata. Callers asking for the same topics while a request is in flight share its
        answer (a preview reads log start offsets and high watermarks at once: one Metadata of 10,000
        partitions instead of two); the answer is as fresh as if each had asked."""
        key = (cluster, tuple(sorted(set(topics))))
        return await self._shared_metadata.run(key, partial(self._fresh_metadata, cluster, list(key[1])))

    async def _recent_topics(self, cluster: str, topics: Sequence[str]) -> dict[str, TopicMetadata]:
        """The topics' metadata, from an answer at most ``metadata_max_age_ms`` old when every topic is in
        one (see ``topics.py`` for when that is safe), else fresh. Topics that do not exist are absent."""
        if cluster not in self._settings:
            raise ClusterNotFound(f"Unknown cluster {cluster!r}")
        known = self._recent[cluster].metadata(topics)
        if known is None:
            _, metadata = await self._metadata(cluster, topics)
            known = {name: metadata.topics[name] for name in topics if name in metadata.topics}
        return known

    async def _fresh_metadata(self, cluster: str, topics: list[str]) -> tuple[ClusterClient, Metadata]:
        """A client that reaches no broker any more is dropped, so the next call bootstraps again (the
        cluster may have come back elsewhere)."""
        client = await self._client(cluster)
        asked_at = time.monotonic()
        try:
            metadata = await client.metadata(topics)
        except ClusterUnreachable:
            if self._clients.get(cluster) is client:
                del self._clients[cluster]
                await client.close()
            raise
        self._recent[cluster].learn_metadata(asked_at, topics, metadata)
        return client, metadata

    async def ping(self, cluster: str) -> bool:
        """A brokers-only metadata request; answers within ``PING_TIMEOUT_S`` so a probe never hangs."""
        try:
            async with asyncio.timeout(PING_TIMEOUT_S):
                await self._metadata(cluster, [])
        except (ClusterUnreachable, TimeoutError):
            return False
        return True

    async def topic_partitions(self, cluster: str, topics: Sequence[str]) -> dict[str, int]:
        try:
            _, metadata = await self._metadata(cluster, topics)
        except ClusterUnreachable as exc:
            raise ServiceUnavailable(str(exc)) from exc
        return {
            name: len(topic.partitions)
            for name, topic in metadata.topics.items()
            if topic.error == "NONE" and name in topics
        }

    async def high_watermarks(
        self, cluster: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """ListOffsets LATEST on each leader; ServiceUnavailable if any partition could not be read."""
        return await self._list_offsets(cluster, partitions, LATEST)

    async def known_high_watermarks(
        self, cluster: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """ListOffsets LATEST; partitions whose leader refused are left out (ServiceUnavailable only when
        the cluster cannot be reached)."""
        return (await self._read_offsets(cluster, partitions, LATEST))[0]

    async def last_stable_offsets(
        self, cluster: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """ListOffsets LATEST read_committed on each leader: the offset before which every transaction
        has ended; ServiceUnavailable if any partition could not be read."""
        return await self._list_offsets(cluster, partitions, LATEST, READ_COMMITTED)

    async def log_start_offsets(
        self, cluster: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """ListOffsets EARLIEST on each leader; ServiceUnavailable if any partition could not be read."""
        return await self._list_offsets(cluster, partitions, EARLIEST)

    async def _list_offsets(
        self,
        cluster: str,
        partitions: Sequence[TopicPartition],
        timestamp: int,
        isolation: int = READ_UNCOMMITTED,
    ) -> dict[TopicPartition, int]:
        """ListOffsets on each partition's leader. The leaders may come from metadata up to five minutes
        old (``RecentTopics.routes``), as Kafka's consumers route: the offsets are still the leaders' own
        answers, and a partition whose leader moved (refused, or not in that metadata) is asked again
        with fresh metadata."""
        offsets, failed = await self._read_offsets(cluster, partitions, timestamp, isolation)
        if failed:
            shown = "; ".join(f"{tp}: {o.error}" for tp, o in sorted(failed.items())[:10])
            raise ServiceUnavailable(
                f"cannot read offsets of {len(failed)} partition(s) on {cluster!r}: {shown}"
            )
        return offsets

    async def _read_offsets(
        self,
        cluster: str,
        partitions: Sequence[TopicPartition],
        timestamp: int,
        isolation: int = READ_UNCOMMITTED,
    ) -> tuple[dict[TopicPartition, int], dict[TopicPartition, PartitionOutcome]]:
        """The offsets read and the partitions that could not be, each with its leader's error."""
        offsets: dict[TopicPartition, int] = {}
        failed: dict[TopicPartition, PartitionOutcome] = {}
        memory = self._recent.get(cluster)
        try:
            known = memory.routes(sorted({tp.topic for tp in partitions})) if memory else None
            if known is not None:
                client = await self._client(cluster)
                offsets, failed = await offsets_on_leaders(
                    client, Metadata((), known), partitions, timestamp, isolation
                )
                partitions = list(failed)
            if partitions:
                client, metadata = await self._metadata(cluster, [tp.topic for tp in partitions])
                fresh, failed = await offsets_on_leaders(client, metadata, partitions, timestamp, isolation)
                offsets.update(fresh)
        except ClusterUnreachable as exc:
            raise ServiceUnavailable(str(exc)) from exc
        return offsets, failed

    async def delete_records_as_answered(
        self,
        cluster: str,
        offsets: Mapping[TopicPartition, int],
        *,
        leader_only: bool,
        timeout_ms: int,
    ) -> AsyncGenerator[dict[TopicPartition, PartitionOutcome], None]:
        """DeleteRecords on each partition's leader; each leader's outcomes as it answers, every partition
        exactly once. The leaders may come from metadata up to five minutes old
        (``RecentTopics.routes``; accepting the deletion usually just read it), as Kafka's producers and
        consumers route: a partition whose remembered leader refuses it (``NOT_LEADER_OR_FOLLOWER``, a
        broker gone, ...) or that the remembered metadata cannot route is sent again, at once, on fresh
        metadata, and only that attempt's outcome is handed on for it."""
        if not offsets:
            return
        partitions = list(offsets)
        memory = self._recent.get(cluster)
        try:
            known = memory.routes(sorted({tp.topic for tp in partitions})) if memory else None
            if known is not None:
                client = await self._client(cluster)
                partitions = []
                answers = delete_on_leaders(
                    client, Metadata((), known), offsets, leader_only=leader_only, timeout_ms=timeout_ms
                )
                async with aclosing(answers):
                    async for answer, moved in answers:
                        partitions += moved
                        if kept := _without(answer, moved) if moved else answer:
                            yield await self._lagging_leaders(cluster, kept, offsets)
            if partitions:
                client, metadata = await self._metadata(cluster, [tp.topic for tp in partitions])
                retried = {tp: offsets[tp] for tp in partitions}
                answers = delete_on_leaders(
                    client, metadata, retried, leader_only=leader_only, timeout_ms=timeout_ms
                )
                async with aclosing(answers):
                    async for answer, _ in answers:
                        partitions = [tp for tp in partitions if tp not in answer]
                        yield await self._lagging_leaders(cluster, answer, offsets)
        except ClusterUnreachable as exc:
            yield outcomes_of(partitions, "NETWORK_EXCEPTION", str(exc))

    async def _lagging_leaders(
        self,
        cluster: str,
        answer: dict[TopicPartition, PartitionOutcome],
        offsets: Mapping[TopicPartition, int],
    ) -> dict[TopicPartition, PartitionOutcome]:
        """An OFFSET_OUT_OF_RANGE may come from a new leader whose high watermark still lags the old
        leader's, which the offset was resolved from: the leader is asked for its HW on fresh metadata and
        the answer judged (``leaders.judge_out_of_range``)."""
        refused = out_of_range(answer)
        if not refused:
            return answer
        try:
            client, metadata = await self._metadata(cluster, [tp.topic for tp in refused])
            ends, refusals = await offsets_on_leaders(client, metadata, refused, LATEST)
        except ClusterUnreachable:
            return answer
        return judge_out_of_range(answer, offsets, ends, refusals)


def _without(
    answer: dict[TopicPartition, PartitionOutcome], moved: Sequence[TopicPartition]
) -> dict[TopicPartition, PartitionOutcome]:
    gone = set(moved)
    return {tp: outcome for tp, outcome in answer.items() if tp not in gone}
