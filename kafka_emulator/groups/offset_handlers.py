"""OffsetCommit (8) and OffsetFetch (9), with KafkaApis' authorization rules (kafka-semantics.md §6.1)."""

from __future__ import annotations

import time

from kafka_emulator.groups.coordinator import GroupCoordinator
from kafka_emulator.groups.group import GroupState
from kafka_emulator.groups.offsets import (
    MAX_METADATA_BYTES,
    NO_OFFSET,
    CommittedOffset,
    commit_error,
)
from kafka_emulator.protocol.api import Authorizer, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.protocol.rows import Rows

# An OffsetFetch partition entry, as the rows of a (possibly 10,000-partition) answer
PARTITION_FIELDS = ("PartitionIndex", "CommittedOffset", "CommittedLeaderEpoch", "Metadata", "ErrorCode")


class OffsetHandlers:
    def __init__(self, coordinator: GroupCoordinator, authorizer: Authorizer) -> None:
        self.coordinator = coordinator
        self.authorizer = authorizer

    async def offset_commit(self, ctx: RequestContext, req: Message) -> Message:
        group_id = req["GroupId"]
        group_error = self._commit_group_error(ctx, req)
        now_ms = int(time.time() * 1000)
        topics = []
        for topic in req["Topics"]:
            partitions = []
            for part in topic["Partitions"]:
                code = self._partition_error(ctx, topic["Name"], part, group_error)
                if code == ErrorCode.NONE:
                    self._store(group_id, topic["Name"], part, now_ms)
                partitions.append({"PartitionIndex": part["PartitionIndex"], "ErrorCode": code})
            topics.append({"Name": topic["Name"], "Partitions": partitions})
        if group_error is None:
            self._touch_member(group_id, req.get("MemberId", ""))
        return {"Topics": topics}

    def _commit_group_error(self, ctx: RequestContext, req: Message) -> int | None:
        group_id = req["GroupId"]
        if not self.authorizer.allowed(ctx, "READ", "GROUP", group_id):
            return ErrorCode.GROUP_AUTHORIZATION_FAILED
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID
        if not self.coordinator.is_coordinator(ctx.broker_id, group_id):
            return ErrorCode.NOT_COORDINATOR
        generation = req.get("GenerationIdOrMemberEpoch", -1)
        member_id = req.get("MemberId", "")
        return commit_error(
            self.coordinator.group(group_id), member_id, generation, req.get("GroupInstanceId")
        )

    def _partition_error(
        self, ctx: RequestContext, topic: str, part: Message, group_error: int | None
    ) -> int:
        if group_error == ErrorCode.GROUP_AUTHORIZATION_FAILED:
            return group_error
        if not self.authorizer.allowed(ctx, "READ", "TOPIC", topic):
            return ErrorCode.TOPIC_AUTHORIZATION_FAILED
        if self.coordinator.state.partition(topic, part["PartitionIndex"]) is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        metadata = part["CommittedMetadata"]
        if metadata is not None and len(metadata.encode()) > MAX_METADATA_BYTES:
            return ErrorCode.OFFSET_METADATA_TOO_LARGE
        return ErrorCode.NONE if group_error is None else group_error

    def _store(self, group_id: str, topic: str, part: Message, now_ms: int) -> None:
        self.coordinator.get_or_create(group_id)  # a group that only commits exists as Empty
        committed = CommittedOffset(
            offset=part["CommittedOffset"],
            leader_epoch=part.get("CommittedLeaderEpoch", -1),
            metadata=part["CommittedMetadata"] or "",
            commit_timestamp_ms=now_ms,
        )
        self.coordinator.offsets.commit(group_id, topic, part["PartitionIndex"], committed)

    def _touch_member(self, group_id: str, member_id: str) -> None:
        group = self.coordinator.group(group_id)
        member = group.members.get(member_id) if group is not None else None
        if group is not None and member is not None and group.state != GroupState.COMPLETING_REBALANCE:
            self.coordinator.rebalancer.touch(group, member)

    async def offset_fetch(self, ctx: RequestContext, req: Message) -> Message:
        if ctx.api_version >= 8:
            groups = [self._fetch_group(ctx, g["GroupId"], g["Topics"]) for g in req["Groups"]]
            return {"Groups": groups}
        found = self._fetch_group(ctx, req["GroupId"], req["Topics"])
        if ctx.api_version < 2 and found["ErrorCode"] != ErrorCode.NONE:
            # v0-1 have no group-level error: every requested partition carries it
            return {"Topics": _with_error(req["Topics"], found["ErrorCode"])}
        return {"Topics": found["Topics"], "ErrorCode": found["ErrorCode"]}

    def _fetch_group(self, ctx: RequestContext, group_id: str, topics: list[Message] | None) -> Message:
        error: int = ErrorCode.NONE
        if not self.authorizer.allowed(ctx, "DESCRIBE", "GROUP", group_id):
            error = ErrorCode.GROUP_AUTHORIZATION_FAILED
        elif not self.coordinator.is_coordinator(ctx.broker_id, group_id):
            error = ErrorCode.NOT_COORDINATOR
        if error != ErrorCode.NONE:
            return {"GroupId": group_id, "ErrorCode": error, "Topics": []}
        if topics is None:
            found = self._all_committed(ctx, group_id)
        else:
            found = [self._requested(ctx, group_id, t["Name"], t["PartitionIndexes"]) for t in topics]
        return {"GroupId": group_id, "ErrorCode": ErrorCode.NONE, "Topics": found}

    def _all_committed(self, ctx: RequestContext, group_id: str) -> list[Message]:
        """Only partitions with a commit, and silently only topics the caller may DESCRIBE."""
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(self.coordinator.offsets.of_group(group_id)):
            by_topic.setdefault(topic, []).append(partition)
        return [
            self._requested(ctx, group_id, topic, partitions)
            for topic, partitions in by_topic.items()
            if self.authorizer.allowed(ctx, "DESCRIBE", "TOPIC", topic)
        ]

    def _requested(self, ctx: RequestContext, group_id: str, topic: str, partitions: list[int]) -> Message:
        if not self.authorizer.allowed(ctx, "DESCRIBE", "TOPIC", topic):
            denied = [_no_offset(p, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in partitions]
            return {"Name": topic, "Partitions": denied}
        get, none = self.coordinator.offsets.of_topic(group_id, topic).get, int(ErrorCode.NONE)
        answered = [
            (partition, NO_OFFSET, -1, "", none)
            if (committed := get(partition)) is None
            else (partition, committed.offset, committed.leader_epoch, committed.metadata, none)
            for partition in partitions
        ]
        return {"Name": topic, "Partitions": Rows(PARTITION_FIELDS, answered)}


def _no_offset(partition: int, error: int) -> Message:
    return {
        "PartitionIndex": partition,
        "CommittedOffset": NO_OFFSET,
        "CommittedLeaderEpoch": -1,
        "Metadata": "",
        "ErrorCode": error,
    }


def _with_error(topics: list[Message], error: int) -> list[Message]:
    return [
        {"Name": t["Name"], "Partitions": [_no_offset(p, error) for p in t["PartitionIndexes"]]}
        for t in topics
    ]
