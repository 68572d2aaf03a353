"""DescribeConfigs (API 32): topic configs with their defaults, and a minimal broker resource."""

from __future__ import annotations

from kafka_emulator.protocol.api import Authorizer, Handler, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import ClusterState
from kafka_emulator.state.topics import TOPIC_DEFAULTS

API_KEY = 32
TOPIC, BROKER = 2, 4
SOURCE_TOPIC, SOURCE_STATIC_BROKER, SOURCE_DEFAULT = 1, 4, 5
TYPE_BOOLEAN, TYPE_STRING, TYPE_INT, TYPE_LONG, TYPE_DOUBLE, TYPE_LIST = 1, 2, 3, 5, 6, 7
CONFIG_TYPES = {
    "cleanup.policy": TYPE_LIST,
    "compression.type": TYPE_STRING,
    "message.timestamp.type": TYPE_STRING,
    "min.cleanable.dirty.ratio": TYPE_DOUBLE,
    "min.insync.replicas": TYPE_INT,
    "max.message.bytes": TYPE_INT,
    "unclean.leader.election.enable": TYPE_BOOLEAN,
}


def broker_configs(state: ClusterState, broker: int) -> dict[str, str]:
    return {
        "broker.id": str(broker),
        "auto.create.topics.enable": "false",
        "default.replication.factor": str(min(3, len(state.broker_ids))),
        "delete.topic.enable": "true",
        "log.retention.check.interval.ms": "300000",
        "num.partitions": "1",
        "offsets.topic.replication.factor": str(min(3, len(state.broker_ids))),
    }


def _entry(name: str, value: str, source: int, version: int) -> Message:
    return {
        "Name": name,
        "Value": value,
        "ReadOnly": source == SOURCE_STATIC_BROKER,
        "IsDefault": source == SOURCE_DEFAULT,
        "ConfigSource": source,
        "IsSensitive": False,
        "Synonyms": [],
        "ConfigType": CONFIG_TYPES.get(name, TYPE_LONG if name.endswith((".ms", ".bytes")) else TYPE_STRING),
        "Documentation": None,
    }


def _result(error: int, message: str | None, resource: Message, configs: list[Message]) -> Message:
    return {
        "ErrorCode": error,
        "ErrorMessage": message,
        "ResourceType": resource["ResourceType"],
        "ResourceName": resource["ResourceName"],
        "Configs": configs,
    }


def describe_configs_handler(state: ClusterState, authorizer: Authorizer) -> Handler:
    def describe(ctx: RequestContext, resource: Message) -> Message:
        keys = resource.get("ConfigurationKeys")
        name = resource["ResourceName"]
        if resource["ResourceType"] == TOPIC:
            if not authorizer.allowed(ctx, "DESCRIBE_CONFIGS", "TOPIC", name):
                return _result(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None, resource, [])
            topic = state.topics.get(name)
            if topic is None:
                return _result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} not found", resource, [])
            values = {
                k: (topic.config(k), SOURCE_TOPIC if k in topic.configs else SOURCE_DEFAULT)
                for k in TOPIC_DEFAULTS
            }
        elif resource["ResourceType"] == BROKER:
            if not authorizer.allowed(ctx, "DESCRIBE_CONFIGS", "CLUSTER", "kafka-cluster"):
                return _result(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None, resource, [])
            broker = int(name) if name.isdigit() else ctx.broker_id
            values = {k: (v, SOURCE_STATIC_BROKER) for k, v in broker_configs(state, broker).items()}
        else:
            return _result(ErrorCode.INVALID_REQUEST, "Unsupported resource type", resource, [])
        selected = sorted(values) if keys is None else [k for k in keys if k in values]
        configs = [_entry(k, values[k][0], values[k][1], ctx.api_version) for k in selected]
        return _result(ErrorCode.NONE, None, resource, configs)

    async def handle(ctx: RequestContext, request: Message) -> Message:
        return {"ThrottleTimeMs": 0, "Results": [describe(ctx, r) for r in request["Resources"]]}

    return handle
