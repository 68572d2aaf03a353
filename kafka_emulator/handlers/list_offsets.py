"""ListOffsets (API 2): EARLIEST, LATEST, MAX_TIMESTAMP and timestamp search, as UnifiedLog answers them."""

from __future__ import annotations

from typing import Any

from kafka_emulator.handlers.common import TopicAuthorization, group_by_topic
from kafka_emulator.handlers.fetch import check_epoch
from kafka_emulator.protocol.api import Authorizer, Handler, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.protocol.rows import Rows
from kafka_emulator.state import ClusterState
from kafka_emulator.state.log import ReplicaLog

API_KEY = 2
LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5
DEBUGGING_REPLICA = -2
CONSUMER_REPLICA = -1
# Below v5 a lagging new leader answers LEADER_NOT_AVAILABLE instead (ReplicaManager.fetchOffset).
OFFSET_NOT_AVAILABLE_VERSION = 5
# Lowest request version that may carry each sentinel (KafkaApis.scala:1163-1169).
MIN_VERSION = {LATEST: 0, EARLIEST: 0, MAX_TIMESTAMP: 7, EARLIEST_LOCAL: 8, LATEST_TIERED: 9}
Answer = tuple[int, int, int]  # timestamp, offset, leader epoch
# A partition's answer from v1 on, as a row: all fixed-size, so a topic's answers are packed at once
# (LeaderEpoch from v4).
ROW_FIELDS = ("PartitionIndex", "ErrorCode", "Timestamp", "Offset", "LeaderEpoch")


def lookup(log: ReplicaLog, timestamp: int, upper_bound: int, leader_epoch: int) -> Answer | None:
    """(timestamp, offset, leader epoch) for one partition, or None for the -1/-1 "no such offset" answer.
    EARLIEST carries the epoch cache's earliest epoch and a found record its batch's epoch
    (``UnifiedLog.fetchOffsetByTimestamp``); LATEST the current one."""
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return -1, log.log_start_offset, log.earliest_epoch
    if timestamp == LATEST:
        return -1, upper_bound, leader_epoch
    if timestamp == LATEST_TIERED:
        return None
    if timestamp == MAX_TIMESTAMP:
        found = log.max_timestamp_offset(upper_bound)
    else:
        found = log.offset_for_timestamp(timestamp, upper_bound)
    return None if found is None else (found[1], found[0], found[2])


class _Lister:
    def __init__(self, state: ClusterState, ctx: RequestContext, authorizer: Authorizer, request: Message):
        self.state = state
        self.ctx = ctx
        self.version = ctx.api_version
        self.debug = request["ReplicaId"] == DEBUGGING_REPLICA
        self.client = request["ReplicaId"] == CONSUMER_REPLICA
        self.allowed = TopicAuthorization(authorizer, ctx, "DESCRIBE")

    def answer(self, topic: str, part: Message, duplicate: bool) -> tuple[int, int, int, int, int]:
        """The partition's answer as a ``ROW_FIELDS`` row."""
        index = part["PartitionIndex"]
        error, found = self._resolve(topic, part, duplicate)
        if found is None:
            return index, error, -1, -1, -1
        return index, error, found[0], found[1], found[2]

    def _resolve(self, topic: str, part: Message, duplicate: bool) -> tuple[ErrorCode, Answer | None]:
        timestamp = part["Timestamp"]
        if duplicate:
            return ErrorCode.INVALID_REQUEST, None
        if not self.allowed(topic):
            return ErrorCode.TOPIC_AUTHORIZATION_FAILED, None
        if timestamp < 0 and (timestamp not in MIN_VERSION or self.version < MIN_VERSION[timestamp]):
            return ErrorCode.UNSUPPORTED_VERSION, None
        partition = self.state.partition(topic, part["PartitionIndex"])
        if partition is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
        broker = self.ctx.broker_id
        if broker not in partition.replicas:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER, None
        # The epoch before leadership, as Kafka (Partition.getLocalLog).
        epoch_error = check_epoch(partition, part.get("CurrentLeaderEpoch", -1))
        if epoch_error != ErrorCode.NONE:
            return epoch_error, None
        if partition.leader != broker and not self.debug:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER, None
        log = partition.logs[broker]
        epoch = partition.leader_epoch
        if self.client and partition.high_watermark_lags() and timestamp not in (EARLIEST, EARLIEST_LOCAL):
            # A new leader whose HW has not reached its epoch's start: LATEST, or a record the search
            # finds at or above the HW, cannot be answered yet (Partition.fetchOffsetForTimestamp).
            found = lookup(log, timestamp, log.log_end_offset, epoch)
            if timestamp == LATEST or found is None or found[1] >= log.high_watermark:
                return self._not_available(), None
        bound = log.log_end_offset if self.debug else log.high_watermark
        return ErrorCode.NONE, lookup(log, timestamp, bound, epoch)

    def _not_available(self) -> ErrorCode:
        if self.version >= OFFSET_NOT_AVAILABLE_VERSION:
            return ErrorCode.OFFSET_NOT_AVAILABLE
        return ErrorCode.LEADER_NOT_AVAILABLE


def list_offsets_handler(state: ClusterState, authorizer: Authorizer) -> Handler:
    async def handle(ctx: RequestContext, request: Message) -> Message:
        lister = _Lister(state, ctx, authorizer, request)
        counts: dict[tuple[str, int], int] = {}
        for topic in request["Topics"]:
            for part in topic["Partitions"]:
                key = (topic["Name"], part["PartitionIndex"])
                counts[key] = counts.get(key, 0) + 1
        results = [
            (
                topic["Name"],
                lister.answer(topic["Name"], part, counts[(topic["Name"], part["PartitionIndex"])] > 1),
            )
            for topic in request["Topics"]
            for part in topic["Partitions"]
        ]
        entry = _v0_entry if ctx.api_version == 0 else _rows_entry
        return {"ThrottleTimeMs": 0, "Topics": group_by_topic(results, entry)}

    return handle


def _rows_entry(name: str, rows: list[Any]) -> Message:
    return {"Name": name, "Partitions": Rows(ROW_FIELDS, rows)}


def _v0_entry(name: str, rows: list[Any]) -> Message:
    """v0 answers an array of offsets (the one found, or none) instead of a timestamp and an offset."""
    partitions = [
        {"PartitionIndex": index, "ErrorCode": error, "OldStyleOffsets": [offset] if offset >= 0 else []}
        for index, error, _, offset, _ in rows
    ]
    return {"Name": name, "Partitions": partitions}
