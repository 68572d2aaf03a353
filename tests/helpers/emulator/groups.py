"""The group coordinator's handlers called as the server calls them, on a real ClusterState (no sockets)."""

from __future__ import annotations

from typing import Any

from kafka_emulator.groups import GroupCoordinator, register_group_handlers
from kafka_emulator.groups.coordinator import OFFSETS_TOPIC
from kafka_emulator.protocol.api import AllowAll, Authorizer, HandlerRegistry, Message, RequestContext
from kafka_emulator.state import ClusterState

COMMIT, FETCH, FIND, JOIN, HEARTBEAT, LEAVE, SYNC, DESCRIBE, LIST = 8, 9, 10, 11, 12, 13, 14, 15, 16


class Harness:
    """Calls the registered handlers the way the server would, one RequestContext per request."""

    def __init__(self, state: ClusterState, coordinator: GroupCoordinator, registry: HandlerRegistry) -> None:
        self.state = state
        self.coordinator = coordinator
        self.registry = registry

    def broker_of(self, group_id: str) -> int:
        return self.coordinator.coordinator_of(group_id)

    async def call(
        self, key: int, version: int, request: Message, broker: int = 0, principal: str = "User:ANONYMOUS"
    ) -> Message:
        handler = self.registry.get(key)
        assert handler is not None
        ctx = RequestContext(broker, key, version, 1, "client-1", principal, "127.0.0.1")
        return await handler(ctx, request)


async def make_harness(authorizer: Authorizer | None = None, **kwargs: Any) -> Harness:
    state = ClusterState([1, 2, 3])
    state.create_topic(OFFSETS_TOPIC, 3, 3, {"cleanup.policy": "compact"})
    state.create_topic("orders", 2, 3)
    for broker in (1, 2, 3):
        state.set_listener(broker, "127.0.0.1", 9000 + broker)
    coordinator = GroupCoordinator(state, **kwargs)
    registry = HandlerRegistry()
    register_group_handlers(registry, coordinator, authorizer or AllowAll())
    return Harness(state, coordinator, registry)


def join_request(group: str, member_id: str = "", session_ms: int = 10_000, meta: bytes = b"m") -> Message:
    return {
        "GroupId": group,
        "SessionTimeoutMs": session_ms,
        "RebalanceTimeoutMs": 5_000,
        "MemberId": member_id,
        "GroupInstanceId": None,
        "ProtocolType": "consumer",
        "Protocols": [{"Name": "range", "Metadata": meta}],
    }
