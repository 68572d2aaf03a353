"""Topics: names, configs and their validation (the checks CreateTopics applies)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from functools import cached_property

from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state.partition import Partition

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
_LEGAL_NAME = re.compile(r"[a-zA-Z0-9._-]+")
MAX_NAME_LENGTH = 249

TOPIC_DEFAULTS: dict[str, str] = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "delete.retention.ms": "86400000",
    "max.message.bytes": "1048588",
    "message.timestamp.type": "CreateTime",
    "min.cleanable.dirty.ratio": "0.5",
    "min.insync.replicas": "1",
    "retention.bytes": "-1",
    "retention.ms": "604800000",
    "segment.bytes": "1073741824",
    "segment.ms": "604800000",
    "unclean.leader.election.enable": "false",
}
_NUMERIC = frozenset(TOPIC_DEFAULTS) - {
    "cleanup.policy",
    "compression.type",
    "message.timestamp.type",
    "unclean.leader.election.enable",
    "min.cleanable.dirty.ratio",
}


class TopicError(ValueError):
    """A topic operation was refused; ``error_code`` is what a broker would answer."""

    def __init__(self, error_code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code


@dataclass(eq=False)
class Topic:
    name: str
    topic_id: bytes
    configs: dict[str, str]
    partitions: list[Partition] = field(default_factory=list)
    internal: bool = field(init=False)

    def __post_init__(self) -> None:
        self.internal = self.name in INTERNAL_TOPICS

    def config(self, name: str) -> str:
        return self.configs.get(name, TOPIC_DEFAULTS.get(name, ""))

    @cached_property
    def deletable(self) -> bool:
        """DeleteRecords is allowed iff cleanup.policy contains ``delete`` (case-insensitive).

        Cached: topic configs cannot change after creation in the emulator (no AlterConfigs).
        """
        policies = {p.strip().lower() for p in self.config("cleanup.policy").split(",")}
        return "delete" in policies


def new_topic_id() -> bytes:
    return uuid.uuid4().bytes


def validate_name(name: str) -> None:
    if not name or name in (".", "..") or len(name) > MAX_NAME_LENGTH or not _LEGAL_NAME.fullmatch(name):
        raise TopicError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name '{name}' is illegal")


def validate_configs(configs: dict[str, str | None]) -> dict[str, str]:
    """Known names with well-formed values; anything else is INVALID_CONFIG."""
    clean: dict[str, str] = {}
    for name, value in configs.items():
        if name not in TOPIC_DEFAULTS or value is None:
            raise TopicError(ErrorCode.INVALID_CONFIG, f"Unknown or null topic config {name}")
        if name == "cleanup.policy":
            parts = [p.strip().lower() for p in value.split(",")]
            if not parts or any(p not in ("delete", "compact") for p in parts):
                raise TopicError(ErrorCode.INVALID_CONFIG, f"Invalid value {value} for cleanup.policy")
        elif name in _NUMERIC:
            try:
                int(value)
            except ValueError:
                raise TopicError(ErrorCode.INVALID_CONFIG, f"Invalid value {value} for {name}") from None
        clean[name] = value
    return clean


def assign_replicas(
    brokers: list[int], partitions: int, replication_factor: int, start: int
) -> list[list[int]]:
    """Round-robin leaders starting at ``start``; followers are the next brokers in order."""
    count = len(brokers)
    return [[brokers[(start + p + r) % count] for r in range(replication_factor)] for p in range(partitions)]
