"""Topics: names, configs and their validation (the checks CreateTopics applies)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from functools import cached_property

from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state.partition import Partition
from kafka_emulator.state.topic_configs import STRING_CHOICES, TOPIC_CONFIGS, TOPIC_DEFAULTS, ConfigType

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
_LEGAL_NAME = re.compile(r"[a-zA-Z0-9._-]+")
MAX_NAME_LENGTH = 249


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
    """Known names with well-formed values (by the config's type); anything else is INVALID_CONFIG."""
    clean: dict[str, str] = {}
    for name, value in configs.items():
        known = TOPIC_CONFIGS.get(name)
        if known is None or value is None:
            raise TopicError(ErrorCode.INVALID_CONFIG, f"Unknown or null topic config {name}")
        if not _well_formed(name, known.type, value):
            raise TopicError(ErrorCode.INVALID_CONFIG, f"Invalid value {value} for {name}")
        clean[name] = value
    return clean


def _well_formed(name: str, kind: ConfigType, value: str) -> bool:
    if name == "cleanup.policy":
        parts = [p.strip().lower() for p in value.split(",")]
        return bool(parts) and all(p in ("delete", "compact") for p in parts)
    if kind in (ConfigType.INT, ConfigType.LONG):
        return value.strip().lstrip("-").isdigit()
    if kind == ConfigType.DOUBLE:
        try:
            float(value)
        except ValueError:
            return False
        return True
    if kind == ConfigType.BOOLEAN:
        return value.strip().lower() in ("true", "false")
    return name not in STRING_CHOICES or value in STRING_CHOICES[name]


def assign_replicas(
    brokers: list[int], partitions: int, replication_factor: int, start: int
) -> list[list[int]]:
    """Round-robin leaders starting at ``start``; followers are the next brokers in order."""
    count = len(brokers)
    return [[brokers[(start + p + r) % count] for r in range(replication_factor)] for p in range(partitions)]
