"""Consumer groups: ListGroups on every broker, FindCoordinator, DescribeGroups and OffsetFetch.

A broker lists only the groups it coordinates, so listing asks every broker (as aiokafka's admin client
does). Describing and fetching committed offsets go to each group's coordinator; while a coordinator is
loading or moving, the call is retried a few times with a fresh FindCoordinator. Any other failure
raises ``GroupQueryFailed``: a preview or guard must never be computed from partial group data.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from aiokafka.protocol.admin import DescribeGroupsRequest, ListGroupsRequest
from aiokafka.protocol.commit import OffsetFetchRequest
from aiokafka.protocol.coordination import FindCoordinatorRequest

from app.adapters.kafka.client import BrokerFailure, ClusterClient
from app.adapters.kafka.consumer_protocol import assigned_partitions, subscribed_topics
from app.adapters.kafka.errors import error_name
from app.adapters.kafka.protocol import VersionUnsupported
from app.domain.ports import GroupInfo, GroupMember, TopicPartition

RETRIABLE = frozenset({"COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS", "NOT_COORDINATOR"})
ATTEMPTS = 5
RETRY_PAUSE_S = 0.1
_GROUP_KEY = 0

T = TypeVar("T")


class GroupQueryFailed(Exception):
    """Group data could not be read completely."""


class _Retriable(Exception):
    pass


async def _send(client: ClusterClient, node: int, request: Any) -> Any:
    try:
        return await client.send(node, request, timeout_s=client.timeout_s)
    except (BrokerFailure, VersionUnsupported) as exc:
        raise GroupQueryFailed(str(exc)) from exc


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
        error = error_name(int(response.error_code))
        if error == "NONE":
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
        error = error_name(int(response.error_code))
        if error != "NONE":
            raise GroupQueryFailed(f"ListGroups on broker {node}: {error}")
        groups.update(str(entry[0]) for entry in response.groups)
    return sorted(groups)


def _member(entry: Any) -> GroupMember:
    member_id, client_id, client_host, metadata, assignment = entry[:5]
    return GroupMember(
        member_id=str(member_id),
        client_id=str(client_id),
        client_host=str(client_host),
        subscribed_topics=subscribed_topics(bytes(metadata or b"")),
        assigned=assigned_partitions(bytes(assignment or b"")),
    )


async def describe_group(client: ClusterClient, brokers: Sequence[int], group: str) -> GroupInfo:
    async def call(node: int) -> GroupInfo:
        response = await _send(client, node, DescribeGroupsRequest([group]))
        error_code, group_id, state, protocol_type, _protocol, members = response.groups[0][:6]
        error = error_name(int(error_code))
        if error in RETRIABLE:
            raise _Retriable(f"DescribeGroups: {error}")
        if error != "NONE":
            raise GroupQueryFailed(f"DescribeGroups for group {group!r}: {error}")
        return GroupInfo(str(group_id), str(state), str(protocol_type), tuple(_member(m) for m in members))

    return await _with_coordinator(client, brokers, group, call)


async def describe_groups(
    client: ClusterClient, brokers: Sequence[int], groups: Sequence[str]
) -> dict[str, GroupInfo]:
    infos = await asyncio.gather(*(describe_group(client, brokers, g) for g in groups))
    return {info.group_id: info for info in infos}


def _by_topic(partitions: Sequence[TopicPartition]) -> list[tuple[str, list[int]]]:
    topics: dict[str, list[int]] = defaultdict(list)
    for tp in partitions:
        topics[tp.topic].append(tp.partition)
    return [(name, sorted(parts)) for name, parts in sorted(topics.items())]


def _read_offsets(group: str, response: Any) -> dict[TopicPartition, int]:
    top_error = error_name(int(getattr(response, "error_code", 0)))
    if top_error in RETRIABLE:
        raise _Retriable(f"OffsetFetch: {top_error}")
    if top_error != "NONE":
        raise GroupQueryFailed(f"OffsetFetch for group {group!r}: {top_error}")
    committed: dict[TopicPartition, int] = {}
    for topic, parts in response.topics:
        for part in parts:
            partition, offset, error = int(part[0]), int(part[1]), error_name(int(part[-1]))
            if error in RETRIABLE:
                raise _Retriable(f"OffsetFetch: {error}")
            if error != "NONE":
                raise GroupQueryFailed(f"OffsetFetch for group {group!r} on {topic}-{partition}: {error}")
            if offset >= 0:  # -1: no committed offset there
                committed[TopicPartition(str(topic), partition)] = offset
    return committed


async def committed_offsets(
    client: ClusterClient, brokers: Sequence[int], group: str, partitions: Sequence[TopicPartition]
) -> dict[TopicPartition, int]:
    request = OffsetFetchRequest(group, _by_topic(partitions))

    async def call(node: int) -> dict[TopicPartition, int]:
        return _read_offsets(group, await _send(client, node, request))

    return await _with_coordinator(client, brokers, group, call)
