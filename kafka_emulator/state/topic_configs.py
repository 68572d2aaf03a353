"""The topic configs of Apache Kafka 4.4 (``LogConfig``): each one's type, default and the broker config
that supplies its default (``LogConfig.TopicConfigSynonyms``), as DescribeConfigs reports them.

``broker_default`` is the broker synonym whose static default Kafka lists as the DEFAULT_CONFIG synonym;
None where the primary broker synonym has no default (``log.retention.ms``, ``log.roll.ms``, ...) or the
topic config has no broker synonym: DescribeConfigs then lists no synonym for a default value.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple


class ConfigType(IntEnum):
    """DescribeConfigs' ``ConfigType`` codes."""

    BOOLEAN = 1
    STRING = 2
    INT = 3
    LONG = 5
    DOUBLE = 6
    LIST = 7


class TopicConfig(NamedTuple):
    default: str
    type: ConfigType
    broker_default: str | None


_B, _S, _I, _L, _D, _LIST = (
    ConfigType.BOOLEAN,
    ConfigType.STRING,
    ConfigType.INT,
    ConfigType.LONG,
    ConfigType.DOUBLE,
    ConfigType.LIST,
)
MAX_LONG = str(2**63 - 1)

TOPIC_CONFIGS: dict[str, TopicConfig] = {
    "cleanup.policy": TopicConfig("delete", _LIST, "log.cleanup.policy"),
    "compression.gzip.level": TopicConfig("-1", _I, "compression.gzip.level"),
    "compression.lz4.level": TopicConfig("9", _I, "compression.lz4.level"),
    "compression.type": TopicConfig("producer", _S, "compression.type"),
    "compression.zstd.level": TopicConfig("3", _I, "compression.zstd.level"),
    "errors.deadletterqueue.group.enable": TopicConfig("false", _B, None),
    "delete.retention.ms": TopicConfig("86400000", _L, "log.cleaner.delete.retention.ms"),
    "file.delete.delay.ms": TopicConfig("60000", _L, "log.segment.delete.delay.ms"),
    "flush.messages": TopicConfig(MAX_LONG, _L, "log.flush.interval.messages"),
    "flush.ms": TopicConfig(MAX_LONG, _L, None),
    "follower.replication.throttled.replicas": TopicConfig("", _LIST, None),
    "index.interval.bytes": TopicConfig("4096", _I, "log.index.interval.bytes"),
    "leader.replication.throttled.replicas": TopicConfig("", _LIST, None),
    "local.retention.bytes": TopicConfig("-2", _L, "log.local.retention.bytes"),
    "local.retention.ms": TopicConfig("-2", _L, "log.local.retention.ms"),
    "max.compaction.lag.ms": TopicConfig(MAX_LONG, _L, "log.cleaner.max.compaction.lag.ms"),
    "max.decompressed.message.bytes": TopicConfig("2147483639", _I, "max.decompressed.message.bytes"),
    "max.message.bytes": TopicConfig("1048588", _I, "message.max.bytes"),
    "message.timestamp.after.max.ms": TopicConfig("3600000", _L, "log.message.timestamp.after.max.ms"),
    "message.timestamp.before.max.ms": TopicConfig(MAX_LONG, _L, "log.message.timestamp.before.max.ms"),
    "message.timestamp.type": TopicConfig("CreateTime", _S, "log.message.timestamp.type"),
    "min.cleanable.dirty.ratio": TopicConfig("0.5", _D, "log.cleaner.min.cleanable.ratio"),
    "min.compaction.lag.ms": TopicConfig("0", _L, "log.cleaner.min.compaction.lag.ms"),
    "min.insync.replicas": TopicConfig("1", _I, "min.insync.replicas"),
    "preallocate": TopicConfig("false", _B, "log.preallocate"),
    "remote.copy.lag.bytes": TopicConfig("-1", _L, "log.remote.copy.lag.bytes"),
    "remote.copy.lag.ms": TopicConfig("0", _L, "log.remote.copy.lag.ms"),
    "remote.log.copy.disable": TopicConfig("false", _B, None),
    "remote.log.delete.on.disable": TopicConfig("false", _B, None),
    "remote.storage.enable": TopicConfig("false", _B, None),
    "retention.bytes": TopicConfig("-1", _L, "log.retention.bytes"),
    "retention.ms": TopicConfig("604800000", _L, None),
    "segment.bytes": TopicConfig("1073741824", _I, "log.segment.bytes"),
    "segment.index.bytes": TopicConfig("10485760", _I, "log.index.size.max.bytes"),
    "segment.jitter.ms": TopicConfig("0", _L, None),
    "segment.ms": TopicConfig("604800000", _L, None),
    "unclean.leader.election.enable": TopicConfig("false", _B, "unclean.leader.election.enable"),
}
TOPIC_DEFAULTS: dict[str, str] = {name: config.default for name, config in TOPIC_CONFIGS.items()}
# Values a string config accepts (``ConfigDef.ValidString``); other strings are free.
STRING_CHOICES: dict[str, frozenset[str]] = {
    "compression.type": frozenset({"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}),
    "message.timestamp.type": frozenset({"CreateTime", "LogAppendTime"}),
}
