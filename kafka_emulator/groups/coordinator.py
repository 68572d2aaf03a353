"""GroupCoordinator: where each group lives, its members and its committed offsets."""

from __future__ import annotations

from typing import Any

from kafka_emulator.groups.group import Group, GroupState, JoinResult, SyncResult
from kafka_emulator.groups.offsets import OffsetStore
from kafka_emulator.groups.rebalance import Rebalancer
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import ClusterState

OFFSETS_TOPIC = "__consumer_offsets"


def java_string_hash(text: str) -> int:
    """Java's String.hashCode: 31-polynomial over UTF-16 code units in signed 32-bit arithmetic."""
    units = text.encode("utf-16-be")
    value = 0
    for i in range(0, len(units), 2):
        value = (value * 31 + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def partition_for(group_id: str, partitions: int) -> int:
    """Utils.abs(groupId.hashCode) % partitions, where Utils.abs(Integer.MIN_VALUE) is 0."""
    code = java_string_hash(group_id)
    return (0 if code == -(1 << 31) else abs(code)) % partitions


class GroupCoordinator:
    """All groups of the cluster. Which broker coordinates a group follows the leader of the group's
    `__consumer_offsets` partition, so a coordinator move keeps members, generation and offsets."""

    def __init__(
        self,
        state: ClusterState,
        initial_rebalance_delay_ms: int = 50,
        min_session_timeout_ms: int = 6_000,
        max_session_timeout_ms: int = 1_800_000,
    ) -> None:
        self.state = state
        self.groups: dict[str, Group] = {}
        self.offsets = OffsetStore()
        self.rebalancer = Rebalancer(initial_rebalance_delay_ms)
        self.min_session_timeout_ms = min_session_timeout_ms
        self.max_session_timeout_ms = max_session_timeout_ms
        state.topic_deleted_listeners.append(self.forget_topic)

    def offsets_partition(self, group_id: str) -> int | None:
        topic = self.state.topics.get(OFFSETS_TOPIC)
        if topic is None or not topic.partitions:
            return None
        return partition_for(group_id, len(topic.partitions))

    def coordinator_of(self, group_id: str) -> int:
        """The broker that coordinates the group, -1 while its offsets partition has no alive leader."""
        partition = self.offsets_partition(group_id)
        return -1 if partition is None else self.state.leader_of(OFFSETS_TOPIC, partition)

    def is_coordinator(self, broker_id: int, group_id: str) -> bool:
        return self.coordinator_of(group_id) == broker_id

    def group(self, group_id: str) -> Group | None:
        return self.groups.get(group_id)

    def get_or_create(self, group_id: str) -> Group:
        return self.groups.setdefault(group_id, Group(group_id))

    def groups_on(self, broker_id: int) -> list[Group]:
        return [g for g in self.groups.values() if self.is_coordinator(broker_id, g.group_id)]

    def forget_topic(self, topic: str) -> None:
        """Kafka drops a deleted topic's offsets at once, and an Empty group left without offsets dies."""
        for group_id in self.offsets.forget_topic(topic):
            group = self.groups.get(group_id)
            idle = group is not None and group.state == GroupState.EMPTY and not group.pending_members
            if idle and not self.offsets.has_offsets(group_id):
                del self.groups[group_id]

    def session_timeout_valid(self, timeout_ms: int) -> bool:
        return self.min_session_timeout_ms <= timeout_ms <= self.max_session_timeout_ms

    def snapshot(self) -> dict[str, Any]:
        ids = sorted(set(self.groups) | set(self.offsets.group_ids()))
        return {group_id: self._group_snapshot(group_id) for group_id in ids}

    def _group_snapshot(self, group_id: str) -> dict[str, Any]:
        group = self.groups.get(group_id) or Group(group_id)
        return {
            "state": group.state.value,
            "protocol_type": group.protocol_type or "",
            "protocol": group.protocol_name or "",
            "generation": group.generation,
            "leader": group.leader_id,
            "coordinator": self.coordinator_of(group_id),
            "members": [
                {"member_id": m.member_id, "client_id": m.client_id, "client_host": m.client_host}
                for m in group.members.values()
            ],
            "offsets": self.offsets.snapshot(group_id),
        }

    def close(self) -> None:
        """Stop every timer and answer requests still waiting, as a broker shutting down would."""
        for group in self.groups.values():
            group.cancel_join_timer()
            for timer in group.pending_members.values():
                timer.cancel()
            for member in group.members.values():
                member.cancel_expiry()
                member.complete_join(JoinResult(ErrorCode.NOT_COORDINATOR, member.member_id))
                member.complete_sync(SyncResult(ErrorCode.NOT_COORDINATOR))

    def describe_state(self, group_id: str) -> GroupState:
        group = self.groups.get(group_id)
        return GroupState.DEAD if group is None else group.state
