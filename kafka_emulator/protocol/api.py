"""The contract between the wire layer and the request handlers.

Requests and responses are plain dicts keyed by the field names of Kafka's message JSON schemas
(``Topics``, ``PartitionIndex``, ``LowWatermark`` ...). Arrays are lists of dicts. The decoder fills
every field the negotiated version defines (schema defaults for absent tagged fields); the encoder
takes schema defaults for fields a handler leaves out, so a handler only writes what it knows.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

Message = dict[str, Any]


@dataclass(frozen=True)
class RequestContext:
    """Who sent a request, to which broker, with which API version."""

    broker_id: int
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    principal: str  # "User:ANONYMOUS" without SASL, else "User:<sasl user>"
    client_host: str


Handler = Callable[[RequestContext, Message], Awaitable[Message]]


class Authorizer(Protocol):
    """Broker-side authorization: operation and resource type use Kafka's names (DELETE, TOPIC)."""

    def allowed(self, ctx: RequestContext, operation: str, resource_type: str, name: str) -> bool: ...


class AllowAll:
    """What a broker without an authorizer does: everything is allowed."""

    def allowed(self, ctx: RequestContext, operation: str, resource_type: str, name: str) -> bool:
        return True


class HandlerRegistry:
    """API key -> handler. Unregistered keys are answered by the server as a broker does."""

    def __init__(self) -> None:
        self._handlers: dict[int, Handler] = {}

    def register(self, api_key: int, handler: Handler) -> None:
        if api_key in self._handlers:
            raise ValueError(f"API key {api_key} already has a handler")
        self._handlers[api_key] = handler

    def get(self, api_key: int) -> Handler | None:
        return self._handlers.get(api_key)

    def keys(self) -> list[int]:
        return sorted(self._handlers)
