"""Fetch (API 1) for consumers: whole batches up to the high watermark, long-poll on MaxWaitMs. From v11
any replica answers, from its own log (Kafka's fetch from followers, KIP-392, without a replica selector).

Fetch sessions (KIP-227) are not kept: every response carries SessionId 0, which tells clients that no
session exists, so they keep sending full requests.
"""

from __future__ import annotations

import asyncio

from kafka_emulator.handlers.common import UNKNOWN_TOPIC_ID, TopicAuthorization
from kafka_emulator.protocol.api import Authorizer, Handler, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import ClusterState, Partition
from kafka_emulator.state.dataplane import wait_for_change

API_KEY = 1
READ_COMMITTED = 1


def check_epoch(partition: Partition, current_leader_epoch: int) -> ErrorCode:
    if current_leader_epoch < 0 or current_leader_epoch == partition.leader_epoch:
        return ErrorCode.NONE
    if current_leader_epoch < partition.leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    return ErrorCode.UNKNOWN_LEADER_EPOCH


class _FetchPlan:
    """The request resolved against the state once; re-read on every long-poll wake-up."""

    def __init__(self, state: ClusterState, ctx: RequestContext, authorizer: Authorizer, request: Message):
        self.state = state
        self.broker = ctx.broker_id
        # From v11 a consumer's fetch carries client metadata (RackId), and Kafka then serves it from any
        # replica, up to that replica's high watermark (FetchParams.fetchOnlyLeader is false); before v11
        # only the leader serves it.
        self.any_replica = ctx.api_version >= 11
        self.by_id = ctx.api_version >= 13
        self.committed = request.get("IsolationLevel", 0) == READ_COMMITTED
        self.max_bytes = request.get("MaxBytes", 0x7FFFFFFF)
        allowed = TopicAuthorization(authorizer, ctx, "READ")
        names = {t.topic_id: name for name, t in state.topics.items()} if self.by_id else {}
        self.topics: list[tuple[Message, str | None, list[Message]]] = []
        self.denied: set[str] = set()
        for topic in request["Topics"]:
            name = names.get(topic["TopicId"]) if self.by_id else topic["Topic"]
            if name is not None and not allowed(name):
                self.denied.add(name)
            self.topics.append((topic, name, topic["Partitions"]))

    def partitions(self) -> list[Partition]:
        found = []
        for _, name, parts in self.topics:
            if name is None or name in self.denied:
                continue
            for part in parts:
                partition = self.state.partition(name, part["Partition"])
                if partition is not None:
                    found.append(partition)
        return found

    def read(self) -> tuple[list[Message], int, bool]:
        """(topic responses, bytes read, any partition error)."""
        budget = self.max_bytes
        responses, total, errors = [], 0, False
        for topic, name, parts in self.topics:
            partitions = []
            for part in parts:
                entry = self._read_partition(name, part, budget - total)
                total += len(entry["Records"] or b"")
                errors = errors or entry["ErrorCode"] != ErrorCode.NONE
                partitions.append(entry)
            key = {"TopicId": topic["TopicId"]} if self.by_id else {"Topic": topic["Topic"]}
            responses.append({**key, "Partitions": partitions})
        return responses, total, errors

    def _read_partition(self, name: str | None, part: Message, budget: int) -> Message:
        index = part["Partition"]
        if name in self.denied:
            return _error(index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        if name is None:
            return _error(index, UNKNOWN_TOPIC_ID if self.by_id else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        partition = self.state.partition(name, index)
        if partition is None:
            return _error(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if self.broker not in partition.replicas:
            return _error(index, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        # The epoch first, then leadership (Partition.getLocalLog).
        epoch_error = check_epoch(partition, part.get("CurrentLeaderEpoch", -1))
        if epoch_error != ErrorCode.NONE:
            return _error(index, epoch_error)
        if partition.leader != self.broker and not self.any_replica:
            return _error(index, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        log = partition.logs[self.broker]
        offset = part["FetchOffset"]
        if offset < log.log_start_offset or offset > log.log_end_offset:
            return _error(index, ErrorCode.OFFSET_OUT_OF_RANGE)
        limit = min(part["PartitionMaxBytes"], budget)
        records = (
            log.read(offset, limit, log.high_watermark) if limit > 0 or budget == self.max_bytes else b""
        )
        return {
            "PartitionIndex": index,
            "ErrorCode": ErrorCode.NONE,
            "HighWatermark": log.high_watermark,
            "LastStableOffset": log.high_watermark,
            "LogStartOffset": log.log_start_offset,
            "AbortedTransactions": [] if self.committed else None,
            "PreferredReadReplica": -1,
            "Records": records,
        }


def _error(index: int, error: int) -> Message:
    return {
        "PartitionIndex": index,
        "ErrorCode": error,
        "HighWatermark": -1,
        "LastStableOffset": -1,
        "LogStartOffset": -1,
        "AbortedTransactions": None,
        "PreferredReadReplica": -1,
        "Records": b"",
    }


def fetch_handler(state: ClusterState, authorizer: Authorizer) -> Handler:
    async def handle(ctx: RequestContext, request: Message) -> Message:
        plan = _FetchPlan(state, ctx, authorizer, request)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0, request["MaxWaitMs"]) / 1000
        min_bytes = request["MinBytes"] if request["MaxWaitMs"] > 0 else 0  # MinBytes 0: answer at once
        while True:
            responses, total, errors = plan.read()
            remaining = deadline - loop.time()
            if total >= min_bytes or errors or remaining <= 0:
                break
            await wait_for_change(plan.partitions(), remaining)
        return {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0, "Responses": responses}

    return handle
