"""CreateTopics (API 19) and DeleteTopics (API 20)."""

from __future__ import annotations

from collections import Counter

from kafka_emulator.protocol.api import Authorizer, Handler, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import ClusterState, Topic, TopicError
from kafka_emulator.state.topic_configs import TOPIC_DEFAULTS

CREATE_TOPICS, DELETE_TOPICS = 19, 20
DEFAULT_PARTITIONS = 1
CONFIG_SOURCE_TOPIC, CONFIG_SOURCE_DEFAULT = 1, 5


def _created(name: str, topic: Topic | None, error: int, message: str | None) -> Message:
    entry: Message = {
        "Name": name,
        "TopicId": topic.topic_id if topic is not None and error == ErrorCode.NONE else bytes(16),
        "ErrorCode": error,
        "ErrorMessage": message,
        "NumPartitions": -1,
        "ReplicationFactor": -1,
        "Configs": None,
    }
    if topic is not None and error == ErrorCode.NONE:
        entry["NumPartitions"] = len(topic.partitions) or entry["NumPartitions"]
        entry["Configs"] = [
            {
                "Name": key,
                "Value": topic.config(key),
                "ReadOnly": False,
                "ConfigSource": CONFIG_SOURCE_TOPIC if key in topic.configs else CONFIG_SOURCE_DEFAULT,
                "IsSensitive": False,
            }
            for key in sorted(TOPIC_DEFAULTS)
        ]
    return entry


def _create_one(state: ClusterState, spec: Message, validate_only: bool) -> Message:
    name = spec["Name"]
    assignments = {a["PartitionIndex"]: list(a["BrokerIds"]) for a in spec.get("Assignments") or []}
    partitions, factor = spec["NumPartitions"], spec["ReplicationFactor"]
    if assignments and (partitions != -1 or factor != -1):
        message = "Both numPartitions or replicationFactor and replicasAssignments were set."
        return _created(name, None, ErrorCode.INVALID_REQUEST, message)
    configs = {c["Name"]: c["Value"] for c in spec.get("Configs") or []}
    try:
        topic = state.create_topic(
            name,
            DEFAULT_PARTITIONS if partitions == -1 else partitions,
            None if factor == -1 else factor,
            configs,
            assignments or None,
            validate_only,
        )
    except TopicError as exc:
        return _created(name, None, exc.error_code, str(exc))
    entry = _created(name, topic, ErrorCode.NONE, None)
    if validate_only:
        entry["NumPartitions"] = len(assignments) or (DEFAULT_PARTITIONS if partitions == -1 else partitions)
    first = topic.partitions[0].replicas if topic.partitions else next(iter(assignments.values()), [])
    entry["ReplicationFactor"] = (
        len(first) if first else (factor if factor != -1 else min(3, len(state.broker_ids)))
    )
    return entry


def create_topics_handler(state: ClusterState, authorizer: Authorizer) -> Handler:
    async def handle(ctx: RequestContext, request: Message) -> Message:
        names = Counter(t["Name"] for t in request["Topics"])
        cluster_create = authorizer.allowed(ctx, "CREATE", "CLUSTER", "kafka-cluster")
        validate_only = bool(request.get("validateOnly"))
        results = []
        for spec in request["Topics"]:
            name = spec["Name"]
            if names[name] > 1:
                results.append(_created(name, None, ErrorCode.INVALID_REQUEST, "Duplicate topic name."))
            elif not cluster_create and not authorizer.allowed(ctx, "CREATE", "TOPIC", name):
                results.append(
                    _created(name, None, ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
                )
            else:
                results.append(_create_one(state, spec, validate_only))
        return {"ThrottleTimeMs": 0, "Topics": results}

    return handle


def _delete_one(state: ClusterState, ctx: RequestContext, authorizer: Authorizer, name: str | None) -> int:
    if name is None:
        return 100  # UNKNOWN_TOPIC_ID
    if not authorizer.allowed(ctx, "DELETE", "TOPIC", name):
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED
    topic = state.topics.get(name)
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if topic.internal:
        return ErrorCode.INVALID_TOPIC_EXCEPTION
    state.delete_topic(name)
    return ErrorCode.NONE


def delete_topics_handler(state: ClusterState, authorizer: Authorizer) -> Handler:
    async def handle(ctx: RequestContext, request: Message) -> Message:
        if ctx.api_version >= 6:
            by_id = {t.topic_id: name for name, t in state.topics.items()}
            wanted = [
                (t.get("Name") or by_id.get(t.get("TopicId") or b""), t.get("TopicId"))
                for t in request["Topics"]
            ]
        else:
            wanted = [(name, None) for name in request["TopicNames"]]
        responses = []
        for name, topic_id in wanted:
            existing = state.topics.get(name) if name else None
            resolved_id = existing.topic_id if existing else (topic_id or bytes(16))
            error = _delete_one(state, ctx, authorizer, name)
            responses.append({"Name": name, "TopicId": resolved_id, "ErrorCode": error, "ErrorMessage": None})
        return {"ThrottleTimeMs": 0, "Responses": responses}

    return handle
