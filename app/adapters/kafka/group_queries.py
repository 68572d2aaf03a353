"""Consumer groups: ListGroups on every broker, FindCoordinator, DescribeGroups and OffsetFetch.

A broker lists only the groups it coordinates, so listing asks every broker (as aiokafka's admin client
does). Describing and fetching committed offsets go to each group's coordinator; while a coordinator is
loading or moving, the call is retried a few times with a fresh FindCoordinator. Any other failure
raises ``GroupQueryFailed``: a preview or guard must never be computed from partial group data.
``ConsumerGroups``, mixed into ``KafkaClusters``, is that part of the ``KafkaGateway`` (a deletion's check
of unconsumed records lists the groups and reads their committed offsets).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from aiokafka.protocol.admin import ListGroupsRequest
from aiokafka.protocol.coordination import FindCoordinatorRequest

from app.adapters.kafka.cluster_client import (
    BrokerFailure,
    ClusterClient,
    ReadFailed,
    SingleFlight,
    unavailable,
)
from app.adapters.kafka.codecs.describe_groups import DescribeGroupsBatch, group_member
from app.adapters.kafka.codecs.offset_fetch import (
    CommittedOffsetsRequest,
    GroupsOffsetsRequest,
    OffsetFetchAnswer,
    read_groups_offsets,
    read_offset_fetch,
)
from app.adapters.kafka.codecs.topic_metadata import Metadata
from app.adapters.kafka.error_codes import ERROR_NAMES, VersionUnsupported
from app.domain.ports import GroupInfo, TopicPartition
from app.domain.positions import Positions

RETRIABLE = frozenset({"COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS", "NOT_COORDINATOR"})
ATTEMPTS = 5
RETRY_PAUSE_S = 0.1
_GROUP_KEY = 0

T = TypeVar("T")


class GroupQueryFailed(ReadFailed):
    """Group data could not be read completely."""


class _Retriable(Exception):
    pass


async def _send(client: ClusterClient, node: int, request: Any) -> Any:
    try:
        return await client.send(node, request, timeout_s=client.timeout_s)
    except (BrokerFailure, VersionUnsupported) as exc:
        raise GroupQueryFailed(str(exc)) from exc


async def _sent_or_none(client: ClusterClient, node: int, request: Any) -> Any:
    """None when the broker could not be asked: its groups are asked again through a fresh
    FindCoordinator, which fails the query if the cluster still cannot answer."""
    try:
        return await client.send(node, request, timeout_s=client.timeout_s)
    except BrokerFailure:
        return None


async def find_coordinator(client: ClusterClient, brokers: Sequence[int], group: str) -> int:
    failures: list[str] = []
    for node in brokers:
        try:
            response = await client.send(
                node, FindCoordinatorRequest(group, _GROUP_KEY), timeout_s=client.timeout_s
            )
        except (BrokerFailure, VersionUnsupported) as exc:
            failures.append(str(exc))
            continue
        error = ERROR_NAMES[int(response.error_code)]
        if error == "NONE":
            client.coordinators[group] = int(response.coordinator_id)
            return int(response.coordinator_id)
        if error not in RETRIABLE:
            raise GroupQueryFailed(f"FindCoordinator for group {group!r}: {error}")
        failures.append(f"broker {node}: {error}")
    raise _Retriable(f"no coordinator for group {group!r} ({'; '.join(failures)})")


async def _with_coordinator(
    client: ClusterClient, brokers: Sequence[int], group: str, call: Callable[[int], Awaitable[T]]
) -> T:
    last = ""
    for attempt in range(ATTEMPTS):
        try:
            return await call(await find_coordinator(client, brokers, group))
        except _Retriable as exc:
            last = str(exc)
            await asyncio.sleep(RETRY_PAUSE_S * (attempt + 1))
    raise GroupQueryFailed(f"group {group!r}: {last}")


async def list_groups(client: ClusterClient, brokers: Sequence[int]) -> list[str]:
    """Every group id of the cluster, sorted."""
    answers = await asyncio.gather(*(_send(client, node, ListGroupsRequest()) for node in brokers))
    groups: set[str] = set()
    for node, response in zip(brokers, answers, strict=True):
        error = ERROR_NAMES[int(response.error_code)]
        if error != "NONE":
            raise GroupQueryFailed(f"ListGroups on broker {node}: {error}")
        groups.update(str(entry[0]) for entry in response.groups)
    return sorted(groups)


async def describe_group(client: ClusterClient, brokers: Sequence[int], group: str) -> GroupInfo:
    async def call(node: int) -> GroupInfo:
        response = await _send(client, node, DescribeGroupsBatch([group]))
        info = _described(response.groups[0])
        if info is None:
            raise _Retriable("DescribeGroups: the coordinator moved or is loading")
        return info

    return await _with_coordinator(client, brokers, group, call)


def _described(entry: Any) -> GroupInfo | None:
    """One group of a DescribeGroups answer; None when it should be asked again (coordinator moved)."""
    error_code, group_id, state, protocol_type, _protocol, members = entry[:6]
    error = ERROR_NAMES[int(error_code)]
    if error in RETRIABLE:
        return None
    if error != "NONE":
        raise GroupQueryFailed(f"DescribeGroups for group {group_id!r}: {error}")
    return GroupInfo(str(group_id), str(state), str(protocol_type), tuple(group_member(m) for m in members))


async def _coordinator_or_none(client: ClusterClient, brokers: Sequence[int], group: str) -> int | None:
    """The coordinator last found for ``group`` (as Kafka's clients keep it), else FindCoordinator; a
    request to a coordinator that moved fails retriably and the group is asked again on its own, with a
    fresh FindCoordinator (``_forget``)."""
    if (known := client.coordinators.get(group)) is not None:
        return known
    try:
        return await find_coordinator(client, brokers, group)
    except _Retriable:
        return None


def _forget(client: ClusterClient, groups: Sequence[str]) -> None:
    for group in groups:
        client.coordinators.pop(group, None)


async def describe_groups(
    client: ClusterClient, brokers: Sequence[int], groups: Sequence[str]
) -> dict[str, GroupInfo]:
    """One DescribeGroups per coordinator with all of its groups, as Kafka's Admin client batches; a
    group whose coordinator moved or is loading is asked again on its own."""
    coordinators = await asyncio.gather(*(_coordinator_or_none(client, brokers, g) for g in groups))
    by_node: dict[int, list[str]] = defaultdict(list)
    again: list[str] = []
    for group, node in zip(groups, coordinators, strict=True):
        (again if node is None else by_node[node]).append(group)
    answers = await asyncio.gather(
        *(_sent_or_none(client, node, DescribeGroupsBatch(members)) for node, members in by_node.items())
    )
    infos: dict[str, GroupInfo] = {}
    for (_node, asked), response in zip(by_node.items(), answers, strict=True):
        if response is None:
            again.extend(asked)
            continue
        for group, entry in zip(asked, response.groups, strict=True):
            if (info := _described(entry)) is None:
                again.append(group)
            else:
                infos[group] = info
    _forget(client, again)
    for info in await asyncio.gather(*(describe_group(client, brokers, g) for g in again)):
        infos[info.group_id] = info
    return infos


def _by_topic(partitions: Sequence[TopicPartition]) -> list[tuple[str, list[int]]]:
    topics: dict[str, list[int]] = defaultdict(list)
    for tp in partitions:
        topics[tp.topic].append(tp.partition)
    return [(name, sorted(parts)) for name, parts in sorted(topics.items())]


def _raise_error(group: str, topic: str, indexes: Sequence[int], errors: Sequence[int]) -> None:
    for partition, code in zip(indexes, errors, strict=True):
        if code:
            error = ERROR_NAMES[code]
            if error in RETRIABLE:
                raise _Retriable(f"OffsetFetch: {error}")
            raise GroupQueryFailed(f"OffsetFetch for group {group!r} on {topic}-{partition}: {error}")


def _committed(group: str, answer: OffsetFetchAnswer) -> Positions:
    top_error = ERROR_NAMES[answer.error_code]
    if top_error in RETRIABLE:
        raise _Retriable(f"OffsetFetch: {top_error}")
    if top_error != "NONE":
        raise GroupQueryFailed(f"OffsetFetch for group {group!r}: {top_error}")
    for topic, (indexes, _, errors) in answer.topics.items():
        if errors.count(0) != len(errors):
            _raise_error(group, topic, indexes, errors)
    committed = Positions()
    for topic, (indexes, offsets, _) in answer.topics.items():
        committed.put(topic, indexes, offsets)  # -1: no committed offset there
    return committed


async def committed_offsets(
    client: ClusterClient, brokers: Sequence[int], group: str, partitions: Sequence[TopicPartition]
) -> Positions:
    request = CommittedOffsetsRequest(group, _by_topic(partitions))

    async def call(node: int) -> Positions:
        return _committed(group, read_offset_fetch(await _send(client, node, request)))

    return await _with_coordinator(client, brokers, group, call)


async def _batch_on_coordinator(
    client: ClusterClient,
    node: int,
    groups: list[str],
    topics: list[tuple[str, list[int]]],
) -> tuple[dict[str, Positions], list[str]]:
    """OffsetFetch v8 for all ``groups`` of one coordinator; the groups to ask one by one come back
    second (the broker has no v8 or could not be asked, or the group's coordinator moved)."""
    try:
        response = await client.send(node, GroupsOffsetsRequest(groups, topics), timeout_s=client.timeout_s)
    except (VersionUnsupported, BrokerFailure):
        return {}, groups
    answers = read_groups_offsets(response).groups
    found: dict[str, Positions] = {}
    again: list[str] = []
    for group in groups:
        try:
            found[group] = _committed(group, answers[group])
        except (_Retriable, KeyError):
            again.append(group)
    return found, again


async def committed_offsets_of_groups(
    client: ClusterClient, brokers: Sequence[int], groups: Sequence[str], partitions: Sequence[TopicPartition]
) -> dict[str, Mapping[TopicPartition, int]]:
    """Committed offsets of many groups: one OffsetFetch per coordinator where brokers have v8 (each
    request costs the broker a pass over its offsets), else one per group."""
    coordinators = await asyncio.gather(*(_coordinator_or_none(client, brokers, g) for g in groups))
    by_node: dict[int, list[str]] = defaultdict(list)
    again: list[str] = []
    for group, node in zip(groups, coordinators, strict=True):
        (again if node is None else by_node[node]).append(group)
    topics = _by_topic(partitions)
    batches = await asyncio.gather(
        *(_batch_on_coordinator(client, node, members, topics) for node, members in by_node.items())
    )
    found: dict[str, Positions] = {}
    for answered, retry in batches:
        found.update(answered)
        again.extend(retry)
    _forget(client, again)
    singles = await asyncio.gather(*(committed_offsets(client, brokers, g, partitions) for g in again))
    found.update(zip(again, singles, strict=True))
    return {group: found[group] for group in groups}


class _Clusters(Protocol):
    _shared_groups: SingleFlight[str, list[str]]

    async def _metadata(self, cluster: str, topics: Sequence[str]) -> tuple[ClusterClient, Metadata]: ...

    async def _client(self, cluster: str) -> ClusterClient: ...


class ConsumerGroups:
    async def list_groups(self: _Clusters, cluster: str) -> list[str]:
        """Callers asking while a listing is in flight share it: its ListGroups were sent at most one
        round trip before they asked (no answer is kept once it is in)."""

        async def listing() -> list[str]:
            async with unavailable(cluster):
                client, metadata = await self._metadata(cluster, [])
                return await list_groups(client, metadata.brokers)

        return await self._shared_groups.run(cluster, listing)

    # Describing groups and reading their offsets goes to each group's coordinator; FindCoordinator may be
    # asked of any broker, so the client's brokers serve and no Metadata is needed.
    async def describe_groups(self: _Clusters, cluster: str, groups: Sequence[str]) -> dict[str, GroupInfo]:
        async with unavailable(cluster):
            client = await self._client(cluster)
            return await describe_groups(client, client.nodes(), groups)

    async def committed_offsets(
        self: _Clusters, cluster: str, groups: Sequence[str], partitions: Sequence[TopicPartition]
    ) -> dict[str, Mapping[TopicPartition, int]]:
        if not groups or not partitions:
            return {group: {} for group in groups}
        async with unavailable(cluster):
            client = await self._client(cluster)
            return await committed_offsets_of_groups(client, client.nodes(), groups, partitions)
