"""Classic consumer groups for the emulator: coordinator placement, rebalances and committed offsets."""

from __future__ import annotations

from kafka_emulator.groups.admin_handlers import AdminHandlers
from kafka_emulator.groups.coordinator import GroupCoordinator, java_string_hash, partition_for
from kafka_emulator.groups.membership_handlers import MembershipHandlers
from kafka_emulator.groups.offset_handlers import OffsetHandlers
from kafka_emulator.protocol.api import Authorizer, HandlerRegistry

OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, JOIN_GROUP = 8, 9, 10, 11
HEARTBEAT, LEAVE_GROUP, SYNC_GROUP, DESCRIBE_GROUPS, LIST_GROUPS = 12, 13, 14, 15, 16

# Highest versions implemented with classic-group semantics; higher ones are KIP-848 / share groups.
GROUP_API_MAX_VERSIONS: dict[int, int] = {
    OFFSET_COMMIT: 8,
    OFFSET_FETCH: 8,
    FIND_COORDINATOR: 4,
    JOIN_GROUP: 9,
    HEARTBEAT: 4,
    LEAVE_GROUP: 5,
    SYNC_GROUP: 5,
    DESCRIBE_GROUPS: 5,
    LIST_GROUPS: 5,
}


def register_group_handlers(
    registry: HandlerRegistry, coordinator: GroupCoordinator, authorizer: Authorizer
) -> None:
    membership = MembershipHandlers(coordinator, authorizer)
    offsets = OffsetHandlers(coordinator, authorizer)
    admin = AdminHandlers(coordinator, authorizer)
    registry.register(FIND_COORDINATOR, membership.find_coordinator)
    registry.register(JOIN_GROUP, membership.join_group)
    registry.register(SYNC_GROUP, membership.sync_group)
    registry.register(HEARTBEAT, membership.heartbeat)
    registry.register(LEAVE_GROUP, membership.leave_group)
    registry.register(OFFSET_COMMIT, offsets.offset_commit)
    registry.register(OFFSET_FETCH, offsets.offset_fetch)
    registry.register(LIST_GROUPS, admin.list_groups)
    registry.register(DESCRIBE_GROUPS, admin.describe_groups)


__all__ = [
    "GROUP_API_MAX_VERSIONS",
    "GroupCoordinator",
    "java_string_hash",
    "partition_for",
    "register_group_handlers",
]
