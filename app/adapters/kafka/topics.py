"""What the service reads about a cluster's topics, and the recent answers it may reuse
(``RecentTopics``: accepting a deletion may use topic metadata and configs answered a moment ago).

What accepting reads from a recent answer, and why that is safe: that each named partition exists, and
each topic's ``cleanup.policy``. Both are looked up fresh whenever the recent answer would refuse the
request (a topic or partition index not known, a compact-only topic), so a topic created or a partition
added is accepted at once. A recent answer can only let through a request that a fresh one would refuse,
and then the broker refuses it at send time and the executor records that outcome for the partition:
a topic deleted meanwhile fails with ``UNKNOWN_TOPIC_OR_PARTITION``, a policy changed to compact-only
with ``POLICY_VIOLATION``. The offsets themselves (high watermarks, log start offsets, committed
offsets) and the consumer groups are never taken from here; ListOffsets and DeleteRecords are only
*routed* with the remembered leaders, as Kafka's clients do, and a partition whose leader refuses is
asked again with fresh metadata (a broker that is not the leader deletes nothing, and resending a
concrete offset is harmless). What each named partition and policy is, is taken from answers up to
``ClusterSettings.metadata_max_age_ms`` old (``metadata``); where to send is taken from answers up to
``ROUTING_MAX_AGE_S`` old (``routes``), Kafka's own clients' ``metadata.max.age.ms``: a request then
asks its leaders while the fresh metadata it reads for its checks is still on its way, instead of after.

``TopicFacts``, mixed into ``KafkaClusters``, is the read-only part of the ``KafkaGateway`` about topics
and brokers beyond offsets: ListOffsets by timestamp, layouts, DescribeConfigs, the topic list, each
broker's DeleteRecords versions. A cluster that cannot be reached or a fact that cannot be read
completely is a ``ServiceUnavailable``: callers never decide on partial data.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from aiokafka.protocol.admin import ApiVersionRequest, DescribeConfigsRequest
from aiokafka.protocol.offset import OffsetRequest

from app.adapters.kafka.cluster_client import (
    BrokerFailure,
    ClusterClient,
    ClusterUnreachable,
    ReadFailed,
    unavailable,
)
from app.adapters.kafka.codecs.delete_records import DELETE_RECORDS_KEY
from app.adapters.kafka.codecs.topic_metadata import AllTopicsMetadataRequest, Metadata, TopicMetadata
from app.adapters.kafka.error_codes import ERROR_NAMES, VersionUnsupported
from app.adapters.kafka.leaders import route
from app.domain.ports import PartitionPlacement, TimeOffset, TopicLayout, TopicPartition
from app.errors import ServiceUnavailable

# Forget entries older than both ages once the memory holds this many topics.
PRUNE_ABOVE = 10_000
# Leaders are remembered for routing this long: Kafka's clients' metadata.max.age.ms default.
ROUTING_MAX_AGE_S = 300.0
TOPIC_RESOURCE = 2
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
_CONSUMER_REPLICA_ID = -1
_READ_UNCOMMITTED = 0


class RecentTopics:
    """Per topic of one cluster: its metadata and configs as last answered, with the time they were asked
    (the time the request was sent, so the age is never understated)."""

    def __init__(self, max_age_s: float) -> None:
        self.max_age_s = max_age_s
        self._topics: dict[str, tuple[float, TopicMetadata]] = {}
        self._configs: dict[tuple[str, tuple[str, ...]], tuple[float, dict[str, str]]] = {}

    def learn_metadata(self, asked_at: float, topics: Iterable[str], metadata: Metadata) -> None:
        """Remember the topics asked about; one the answer lacks or reports an error for is forgotten,
        with its configs (a topic created again under that name may have others)."""
        for name in topics:
            topic = metadata.topics.get(name)
            if topic is not None and topic.error == "NONE":
                self._topics[name] = (asked_at, topic)
            elif self._topics.pop(name, None) is not None:
                self._configs = {key: value for key, value in self._configs.items() if key[0] != name}
        if len(self._topics) > PRUNE_ABOVE:
            oldest = time.monotonic() - max(2 * self.max_age_s, ROUTING_MAX_AGE_S)
            self._topics = {name: entry for name, entry in self._topics.items() if entry[0] >= oldest}
            self._configs = {key: entry for key, entry in self._configs.items() if entry[0] >= oldest}

    def metadata(self, topics: Sequence[str]) -> dict[str, TopicMetadata] | None:
        """Every topic's metadata if each is known and at most ``max_age_s`` old, else None."""
        return self._known(topics, self.max_age_s)

    def routes(self, topics: Sequence[str]) -> dict[str, TopicMetadata] | None:
        """Every topic's metadata to route ListOffsets and DeleteRecords with (a leader that moved
        refuses, and its partitions are asked again on fresh metadata), if each is known and at most
        ``ROUTING_MAX_AGE_S`` old; None also when this memory is off (``max_age_s`` 0)."""
        return self._known(topics, max(self.max_age_s, ROUTING_MAX_AGE_S) if self.max_age_s > 0 else 0)

    def _known(self, topics: Sequence[str], max_age_s: float) -> dict[str, TopicMetadata] | None:
        if max_age_s <= 0:
            return None
        oldest = time.monotonic() - max_age_s
        known: dict[str, TopicMetadata] = {}
        for name in topics:
            entry = self._topics.get(name)
            if entry is None or entry[0] < oldest:
                return None
            known[name] = entry[1]
        return known

    def learn_configs(
        self, asked_at: float, names: Sequence[str], configs: dict[str, dict[str, str]]
    ) -> None:
        key = tuple(names)
        for topic, values in configs.items():
            self._configs[(topic, key)] = (asked_at, values)

    def configs(self, topics: Sequence[str], names: Sequence[str]) -> dict[str, dict[str, str]] | None:
        """Every topic's values of ``names`` if each is known and young enough, else None."""
        if self.max_age_s <= 0:
            return None
        oldest, key = time.monotonic() - self.max_age_s, tuple(names)
        known: dict[str, dict[str, str]] = {}
        for topic in topics:
            entry = self._configs.get((topic, key))
            if entry is None or entry[0] < oldest:
                return None
            known[topic] = entry[1]
        return known


class TopicQueryFailed(ReadFailed):
    """A topic or broker fact could not be read."""


async def send_or_fail(client: ClusterClient, node: int, request: Any) -> Any:
    """Send one request; any client-side failure is a ``TopicQueryFailed``."""
    try:
        return await client.send(node, request, timeout_s=client.timeout_s)
    except (BrokerFailure, VersionUnsupported) as exc:
        raise TopicQueryFailed(str(exc)) from exc


async def _times_on_leader(
    client: ClusterClient, leader: int, times: Mapping[TopicPartition, int]
) -> dict[TopicPartition, TimeOffset]:
    by_topic: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for tp, timestamp in times.items():
        by_topic[tp.topic].append((tp.partition, timestamp))
    topics = [(name, sorted(parts)) for name, parts in sorted(by_topic.items())]
    response = await send_or_fail(
        client, leader, OffsetRequest(_CONSUMER_REPLICA_ID, _READ_UNCOMMITTED, topics)
    )
    answered: dict[TopicPartition, TimeOffset] = {}
    for topic, parts in response.topics:
        for partition, code, timestamp, offset in (p[:4] for p in parts):
            tp = TopicPartition(str(topic), int(partition))
            if (error := ERROR_NAMES[int(code)]) != "NONE":
                raise TopicQueryFailed(f"ListOffsets by time on {tp} (broker {leader}): {error}")
            answered[tp] = TimeOffset(offset=int(offset), timestamp=int(timestamp))
    if missing := [tp for tp in times if tp not in answered]:
        raise TopicQueryFailed(f"broker {leader} did not answer for {len(missing)} partition(s)")
    return answered


async def offsets_for_times(
    client: ClusterClient, metadata: Metadata, times: Mapping[TopicPartition, int]
) -> dict[TopicPartition, TimeOffset]:
    """One ListOffsets per leader with all its partitions, leaders in parallel."""
    by_leader, failed = route(metadata, times)
    if failed:
        tp, outcome = sorted(failed.items())[0]
        raise TopicQueryFailed(f"{len(failed)} partition(s) cannot be routed, e.g. {tp}: {outcome.error}")
    answers = await asyncio.gather(
        *(
            _times_on_leader(client, leader, {tp: times[tp] for tp in tps})
            for leader, tps in by_leader.items()
        )
    )
    return {tp: offset for answer in answers for tp, offset in answer.items()}


async def topic_configs(
    client: ClusterClient, topics: Sequence[str], names: Sequence[str]
) -> dict[str, dict[str, str]]:
    """DescribeConfigs for topic resources from the first broker that answers (any broker answers for
    topics); an error for a topic is a ``TopicQueryFailed``."""
    if not topics:
        return {}
    resources = [(TOPIC_RESOURCE, topic, list(names)) for topic in sorted(set(topics))]
    response, failures = None, []
    for node in client.nodes():
        try:
            response = await send_or_fail(client, node, DescribeConfigsRequest(resources))
            break
        except TopicQueryFailed as exc:
            failures.append(str(exc))
    if response is None:
        raise TopicQueryFailed(f"no broker answered DescribeConfigs ({'; '.join(failures)})")
    configs: dict[str, dict[str, str]] = {}
    for resource in response.resources:
        code, _message, _type, name, entries = resource[:5]
        if (error := ERROR_NAMES[int(code)]) != "NONE":
            raise TopicQueryFailed(f"DescribeConfigs for topic {name!r}: {error}")
        configs[str(name)] = {str(e[0]): str(e[1]) for e in entries if e[1] is not None}
    return configs


async def delete_records_versions(client: ClusterClient, brokers: Sequence[int]) -> dict[int, int]:
    """Each broker's highest DeleteRecords version, -1 when it does not advertise DeleteRecords."""

    async def one(node: int) -> int:
        response = await send_or_fail(client, node, ApiVersionRequest())
        for key, _low, high in (entry[:3] for entry in response.api_versions):
            if int(key) == DELETE_RECORDS_KEY:
                return int(high)
        return -1

    versions = await asyncio.gather(*(one(node) for node in brokers))
    return dict(zip(brokers, versions, strict=True))


class _Clusters(Protocol):
    _recent: Mapping[str, RecentTopics]

    async def _metadata(self, cluster: str, topics: Sequence[str]) -> tuple[ClusterClient, Metadata]: ...

    async def _recent_topics(self, cluster: str, topics: Sequence[str]) -> dict[str, TopicMetadata]: ...

    async def _client(self, cluster: str) -> ClusterClient: ...


class TopicFacts:
    async def offsets_for_times(
        self: _Clusters, cluster: str, times: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, TimeOffset]:
        if not times:
            return {}
        async with unavailable(cluster):
            client, metadata = await self._metadata(cluster, [tp.topic for tp in times])
            return await offsets_for_times(client, metadata, times)

    async def topic_layouts(
        self: _Clusters, cluster: str, topics: Sequence[str], *, recent: bool = False
    ) -> dict[str, TopicLayout]:
        async with unavailable(cluster):
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
        self: _Clusters, cluster: str, topics: Sequence[str], names: Sequence[str], *, recent: bool = False
    ) -> dict[str, dict[str, str]]:
        """Any broker answers DescribeConfigs for topics: the client's brokers are tried in turn, no
        Metadata needed."""
        memory = self._recent.get(cluster)
        if recent and memory is not None and (known := memory.configs(topics, names)) is not None:
            return known
        async with unavailable(cluster):
            client = await self._client(cluster)
            asked_at = time.monotonic()
            configs = await topic_configs(client, topics, names)
        if memory is not None:
            memory.learn_configs(asked_at, names, configs)
        return configs

    async def delete_records_versions(self: _Clusters, cluster: str) -> dict[int, int]:
        async with unavailable(cluster):
            client, metadata = await self._metadata(cluster, [])
            return await delete_records_versions(client, metadata.brokers)

    async def list_topics(self: _Clusters, cluster: str) -> list[str]:
        """Every topic of the cluster but Kafka's internal ones (for retention policies that select
        topics by prefix or pattern), from the first broker that answers."""
        try:
            client, brokers_only = await self._metadata(cluster, [])
        except ClusterUnreachable as exc:
            raise ServiceUnavailable(f"cluster {cluster!r}: {exc}") from exc
        failures: list[str] = []
        for node in brokers_only.brokers:
            try:
                metadata = await client.send(node, AllTopicsMetadataRequest(), timeout_s=client.timeout_s)
            except (BrokerFailure, VersionUnsupported) as exc:
                failures.append(str(exc))
                continue
            assert isinstance(metadata, Metadata)
            return sorted(
                name
                for name, topic in metadata.topics.items()
                if topic.error == "NONE" and name not in INTERNAL_TOPICS
            )
        raise ServiceUnavailable(f"cluster {cluster!r}: no broker listed its topics ({'; '.join(failures)})")
