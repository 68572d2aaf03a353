"""Metadata (API 3): alive brokers only, no auto-creation, DESCRIBE-filtered topics."""

from __future__ import annotations

from kafka_emulator.handlers.common import (
    NO_AUTHORIZED_OPERATIONS,
    UNKNOWN_TOPIC_ID,
    TopicAuthorization,
    authorized_operations,
)
from kafka_emulator.protocol.api import Authorizer, Handler, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import ClusterState, Partition, Topic

API_KEY = 3
ZERO_UUID = bytes(16)


def brokers(state: ClusterState) -> list[Message]:
    found = []
    for broker in state.alive_brokers():
        address = state.broker_address(broker)
        if address is not None:
            found.append({"NodeId": broker, "Host": address[0], "Port": address[1], "Rack": None})
    return found


def partition_entry(state: ClusterState, partition: Partition) -> Message:
    leader_alive = partition.leader in state.alive
    return {
        "ErrorCode": ErrorCode.NONE if leader_alive else ErrorCode.LEADER_NOT_AVAILABLE,
        "PartitionIndex": partition.index,
        "LeaderId": partition.leader if leader_alive else -1,
        "LeaderEpoch": partition.leader_epoch,
        "ReplicaNodes": list(partition.replicas),
        "IsrNodes": partition.isr(),
        "OfflineReplicas": [b for b in partition.replicas if b not in state.alive],
    }


def topic_entry(
    name: str | None, topic_id: bytes, error: int, partitions: list[Message], internal: bool
) -> Message:
    return {
        "ErrorCode": error,
        "Name": name,
        "TopicId": topic_id,
        "IsInternal": internal,
        "Partitions": partitions,
        "TopicAuthorizedOperations": NO_AUTHORIZED_OPERATIONS,
    }


def _requested(state: ClusterState, request: Message, version: int) -> list[tuple[str | None, bytes]] | None:
    """Explicitly requested (name, id) pairs, or None for "all topics"."""
    topics = request.get("Topics")
    if topics is None or (version == 0 and not topics):
        return None
    by_id = {t.topic_id: name for name, t in state.topics.items()}
    wanted = []
    for entry in topics:
        name = entry.get("Name")
        topic_id = entry.get("TopicId") or ZERO_UUID
        if name is None and topic_id != ZERO_UUID:
            name = by_id.get(topic_id)
            wanted.append((name, topic_id))
        else:
            wanted.append((name, topic_id))
    return wanted


def metadata_handler(state: ClusterState, authorizer: Authorizer) -> Handler:
    async def handle(ctx: RequestContext, request: Message) -> Message:
        allowed = TopicAuthorization(authorizer, ctx, "DESCRIBE")
        include_ops = bool(request.get("IncludeTopicAuthorizedOperations"))
        entries: list[Message] = []
        wanted = _requested(state, request, ctx.api_version)
        if wanted is None:
            for name, topic in state.topics.items():
                if allowed(name):
                    entries.append(_describe(state, topic))
        else:
            for wanted_name, topic_id in wanted:
                entries.append(_explicit(state, wanted_name, topic_id, allowed))
        if include_ops:
            for entry in entries:
                if entry["ErrorCode"] in (ErrorCode.NONE, ErrorCode.LEADER_NOT_AVAILABLE) and entry["Name"]:
                    entry["TopicAuthorizedOperations"] = authorized_operations(authorizer, ctx, entry["Name"])
        alive = state.alive_brokers()
        return {
            "ThrottleTimeMs": 0,
            "Brokers": brokers(state),
            "ClusterId": state.cluster_id,
            "ControllerId": alive[0] if alive else -1,
            "Topics": entries,
            "ClusterAuthorizedOperations": NO_AUTHORIZED_OPERATIONS,
        }

    return handle


def _describe(state: ClusterState, topic: Topic) -> Message:
    partitions = [partition_entry(state, p) for p in topic.partitions]
    return topic_entry(topic.name, topic.topic_id, ErrorCode.NONE, partitions, topic.internal)


def _explicit(state: ClusterState, name: str | None, topic_id: bytes, allowed: TopicAuthorization) -> Message:
    if name is None:
        return topic_entry(None, topic_id, UNKNOWN_TOPIC_ID, [], False)
    if not allowed(name):
        return topic_entry(name, topic_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED, [], False)
    topic = state.topics.get(name)
    if topic is None:
        return topic_entry(name, topic_id, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [], False)
    return _describe(state, topic)
