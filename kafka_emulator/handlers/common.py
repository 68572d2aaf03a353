"""Helpers shared by the data-plane handlers."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from kafka_emulator.protocol.api import Authorizer, Message, RequestContext

UNKNOWN_TOPIC_ID = 100
# A partition's result in a handler's answer: a message, or a row of ``Rows``.
Result = TypeVar("Result")
NO_AUTHORIZED_OPERATIONS = -2147483648

# AclOperation codes for the authorizedOperations bit fields (KIP-430).
TOPIC_OPERATIONS = {
    "READ": 3,
    "WRITE": 4,
    "CREATE": 5,
    "DELETE": 6,
    "ALTER": 7,
    "DESCRIBE": 8,
    "DESCRIBE_CONFIGS": 10,
    "ALTER_CONFIGS": 11,
}


class TopicAuthorization:
    """Per-request cache: each distinct topic name is asked once, as Kafka's filterByAuthorized does."""

    def __init__(self, authorizer: Authorizer, ctx: RequestContext, operation: str) -> None:
        self._authorizer = authorizer
        self._ctx = ctx
        self._operation = operation
        self._seen: dict[str, bool] = {}

    def __call__(self, topic: str) -> bool:
        allowed = self._seen.get(topic)
        if allowed is None:
            allowed = self._authorizer.allowed(self._ctx, self._operation, "TOPIC", topic)
            self._seen[topic] = allowed
        return allowed


def authorized_operations(authorizer: Authorizer, ctx: RequestContext, topic: str) -> int:
    bits = 0
    for operation, code in TOPIC_OPERATIONS.items():
        if authorizer.allowed(ctx, operation, "TOPIC", topic):
            bits |= 1 << code
    return bits


def group_by_topic(
    results: Iterable[tuple[str, Result]], topic_entry: Callable[[str, list[Result]], Message]
) -> list[Message]:
    """[(topic, partition result)] -> one entry per topic, first-seen order."""
    grouped: dict[str, list[Result]] = {}
    for topic, partition in results:
        grouped.setdefault(topic, []).append(partition)
    return [topic_entry(topic, partitions) for topic, partitions in grouped.items()]


def as_int(value: Any, default: int = -1) -> int:
    return default if value is None else int(value)
