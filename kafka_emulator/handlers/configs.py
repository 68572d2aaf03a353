"""DescribeConfigs (API 32): a topic's full config set (Kafka 4.4's ``LogConfig``) with values, sources
and synonyms as ``ConfigHelper.createTopicConfigEntry`` reports them, and a minimal broker resource."""

from __future__ import annotations

from kafka_emulator.protocol.api import Authorizer, Handler, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import ClusterState
from kafka_emulator.state.topic_configs import TOPIC_CONFIGS, ConfigType
from kafka_emulator.state.topics import Topic

API_KEY = 32
TOPIC, BROKER = 2, 4
SOURCE_TOPIC, SOURCE_STATIC_BROKER, SOURCE_DEFAULT = 1, 4, 5


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


_BROKER_TYPES = {
    "broker.id": ConfigType.INT,
    "auto.create.topics.enable": ConfigType.BOOLEAN,
    "default.replication.factor": ConfigType.INT,
    "delete.topic.enable": ConfigType.BOOLEAN,
    "log.retention.check.interval.ms": ConfigType.LONG,
    "num.partitions": ConfigType.INT,
    "offsets.topic.replication.factor": ConfigType.INT,
}


def _entry(name: str, value: str, source: int, synonyms: list[Message]) -> Message:
    known = TOPIC_CONFIGS.get(name)
    kind = known.type if known and source != SOURCE_STATIC_BROKER else _BROKER_TYPES.get(name)
    return {
        "Name": name,
        "Value": value,
        "ReadOnly": source == SOURCE_STATIC_BROKER,
        "IsDefault": source == SOURCE_DEFAULT,
        "ConfigSource": source,
        "IsSensitive": False,
        "Synonyms": synonyms,
        "ConfigType": kind or ConfigType.STRING,
        "Documentation": None,
    }


def _topic_entry(topic: Topic, name: str, with_synonyms: bool) -> Message:
    """Synonyms: the topic's own value (TOPIC_CONFIG) if set, then the broker config supplying the default
    (DEFAULT_CONFIG); the entry's source is the first synonym's, DEFAULT_CONFIG without any."""
    known = TOPIC_CONFIGS[name]
    synonyms: list[Message] = []
    if name in topic.configs:
        synonyms.append({"Name": name, "Value": topic.configs[name], "Source": SOURCE_TOPIC})
    if known.broker_default is not None:
        synonyms.append({"Name": known.broker_default, "Value": known.default, "Source": SOURCE_DEFAULT})
    source = synonyms[0]["Source"] if synonyms else SOURCE_DEFAULT
    return _entry(name, topic.config(name), source, synonyms if with_synonyms else [])


def _result(error: int, message: str | None, resource: Message, configs: list[Message]) -> Message:
    return {
        "ErrorCode": error,
        "ErrorMessage": message,
        "ResourceType": resource["ResourceType"],
        "ResourceName": resource["ResourceName"],
        "Configs": configs,
    }


def describe_configs_handler(state: ClusterState, authorizer: Authorizer) -> Handler:
    def describe(ctx: RequestContext, request: Message, resource: Message) -> Message:
        keys = resource.get("ConfigurationKeys")
        name = resource["ResourceName"]
        if resource["ResourceType"] == TOPIC:
            if not authorizer.allowed(ctx, "DESCRIBE_CONFIGS", "TOPIC", name):
                return _result(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None, resource, [])
            topic = state.topics.get(name)
            if topic is None:
                return _result(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} not found", resource, [])
            names = sorted(TOPIC_CONFIGS) if keys is None else [k for k in keys if k in TOPIC_CONFIGS]
            synonyms = bool(request.get("IncludeSynonyms"))
            configs = [_topic_entry(topic, k, synonyms) for k in names]
            return _result(ErrorCode.NONE, None, resource, configs)
        if resource["ResourceType"] != BROKER:
            return _result(ErrorCode.INVALID_REQUEST, "Unsupported resource type", resource, [])
        if not authorizer.allowed(ctx, "DESCRIBE_CONFIGS", "CLUSTER", "kafka-cluster"):
            return _result(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None, resource, [])
        broker = int(name) if name.isdigit() else ctx.broker_id
        values = broker_configs(state, broker)
        selected = sorted(values) if keys is None else [k for k in keys if k in values]
        configs = [_entry(k, values[k], SOURCE_STATIC_BROKER, []) for k in selected]
        return _result(ErrorCode.NONE, None, resource, configs)

    async def handle(ctx: RequestContext, request: Message) -> Message:
        return {"ThrottleTimeMs": 0, "Results": [describe(ctx, request, r) for r in request["Resources"]]}

    return handle
