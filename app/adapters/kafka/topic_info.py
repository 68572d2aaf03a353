"""Per-topic and per-broker facts beyond offsets: ListOffsets by timestamp, DescribeConfigs and each
broker's DeleteRecords version range (ApiVersions)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from aiokafka.protocol.admin import ApiVersionRequest, DescribeConfigsRequest
from aiokafka.protocol.offset import OffsetRequest

from app.adapters.kafka.client import BrokerFailure, ClusterClient
from app.adapters.kafka.errors import error_name
from app.adapters.kafka.metadata import Metadata, route
from app.adapters.kafka.protocol import DELETE_RECORDS_KEY, VersionUnsupported
from app.domain.ports import TimeOffset, TopicPartition

TOPIC_RESOURCE = 2
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
_CONSUMER_REPLICA_ID = -1
_READ_UNCOMMITTED = 0


class TopicQueryFailed(Exception):
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
            if (error := error_name(int(code))) != "NONE":
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
        if (error := error_name(int(code))) != "NONE":
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
