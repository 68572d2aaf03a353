"""Committed offsets by group, kept in the coordinator object so they survive coordinator moves."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from kafka_emulator.groups.group import Group, GroupState
from kafka_emulator.protocol.errors import ErrorCode

NO_OFFSET = -1  # OffsetFetchResponse.INVALID_OFFSET: "no committed offset"
MAX_METADATA_BYTES = 4096  # offset.metadata.max.bytes


class CommittedOffset(NamedTuple):
    """A named tuple of plain values: the garbage collector stops tracking it, so a million commits
    (10,000 partitions x 100 groups) do not make every full collection walk them."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int


class OffsetStore:
    """group -> topic -> partition -> committed offset: a topic's offsets of a group are one lookup
    (OffsetFetch of 10,000 partitions), and a deleted topic is dropped per group, not per partition."""

    def __init__(self) -> None:
        self._groups: dict[str, dict[str, dict[int, CommittedOffset]]] = {}

    def commit(self, group_id: str, topic: str, partition: int, committed: CommittedOffset) -> None:
        self._groups.setdefault(group_id, {}).setdefault(topic, {})[partition] = committed

    def get(self, group_id: str, topic: str, partition: int) -> CommittedOffset | None:
        return self.of_topic(group_id, topic).get(partition)

    def of_topic(self, group_id: str, topic: str) -> Mapping[int, CommittedOffset]:
        return self._groups.get(group_id, _NONE).get(topic, _NOTHING)

    def of_group(self, group_id: str) -> dict[tuple[str, int], CommittedOffset]:
        return {
            (topic, partition): committed
            for topic, offsets in self._groups.get(group_id, _NONE).items()
            for partition, committed in offsets.items()
        }

    def has_offsets(self, group_id: str) -> bool:
        return any(self._groups.get(group_id, _NONE).values())

    def forget_topic(self, topic: str) -> set[str]:
        """Drop every group's offsets of a deleted topic; returns the groups that lost some."""
        touched = set()
        for group_id, topics in self._groups.items():
            if topics.pop(topic, None):
                touched.add(group_id)
        return touched

    def group_ids(self) -> list[str]:
        return [group_id for group_id, topics in self._groups.items() if any(topics.values())]

    def snapshot(self, group_id: str) -> dict[str, dict[str, int]]:
        topics: dict[str, dict[str, int]] = {}
        for (topic, partition), committed in sorted(self.of_group(group_id).items()):
            topics.setdefault(topic, {})[str(partition)] = committed.offset
        return topics


_NONE: dict[str, dict[int, CommittedOffset]] = {}
_NOTHING: dict[int, CommittedOffset] = {}


def commit_error(group: Group | None, member_id: str, generation: int, instance_id: str | None) -> int | None:
    """GroupCoordinator.validateOffsetCommit + doCommitOffsets: None means the commit may be stored.

    A group that never joins commits with generation -1 and an empty member id ("simple" commits);
    members of a managed group must name their member id and current generation.
    """
    if group is None:
        return None if generation < 0 else ErrorCode.ILLEGAL_GENERATION
    if group.state == GroupState.DEAD:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if generation >= 0 or member_id or instance_id is not None:
        if group.find_member(member_id, instance_id) is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if generation != group.generation:
            return ErrorCode.ILLEGAL_GENERATION
        if group.state == GroupState.COMPLETING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return None
    if group.state != GroupState.EMPTY:
        return ErrorCode.UNKNOWN_MEMBER_ID
    return None
