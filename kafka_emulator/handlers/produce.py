"""Produce (API 0): v2 record batches stored as produced, base offsets assigned by the leader."""

from __future__ import annotations

import asyncio

from kafka_emulator.handlers.common import TopicAuthorization, group_by_topic
from kafka_emulator.protocol.api import Authorizer, Handler, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import ClusterState
from kafka_emulator.state.dataplane import append, wait_for_change

API_KEY = 0


class _Appended:
    __slots__ = ("append_time", "base_offset", "end_offset", "error", "index", "topic")

    def __init__(
        self,
        topic: str,
        index: int,
        error: ErrorCode,
        base_offset: int = -1,
        end_offset: int = -1,
        append_time: int = -1,
    ):
        self.topic = topic
        self.index = index
        self.error = error
        self.base_offset = base_offset
        self.end_offset = end_offset
        self.append_time = append_time


def _append_one(
    state: ClusterState, ctx: RequestContext, topic: str, index: int, records: bytes | None
) -> _Appended:
    found = state.topics.get(topic)
    if found is None or state.partition(topic, index) is None:
        return _Appended(topic, index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if found.internal:
        return _Appended(topic, index, ErrorCode.INVALID_TOPIC_EXCEPTION)
    if not records:
        return _Appended(topic, index, ErrorCode.CORRUPT_MESSAGE)
    partition = state.partition(topic, index)
    assert partition is not None
    if partition.leader == ctx.broker_id:
        min_isr = int(found.config("min.insync.replicas"))
        if len(partition.isr()) < min_isr:
            return _Appended(topic, index, ErrorCode.NOT_ENOUGH_REPLICAS)
    error, base, append_time = append(state, ctx.broker_id, found, index, records)
    end = partition.logs[ctx.broker_id].log_end_offset if error == ErrorCode.NONE else -1
    return _Appended(topic, index, error, base, end, append_time)


async def _await_replication(
    state: ClusterState, broker: int, appended: list[_Appended], timeout_ms: int
) -> None:
    """acks=all: wait until the leader's high watermark covers each append, else REQUEST_TIMED_OUT."""
    deadline = asyncio.get_running_loop().time() + timeout_ms / 1000
    while True:
        waiting = []
        for item in appended:
            if item.error != ErrorCode.NONE or item.end_offset < 0:
                continue
            partition = state.partition(item.topic, item.index)
            if partition is None or partition.leader != broker:
                item.error = ErrorCode.NOT_LEADER_OR_FOLLOWER
            elif partition.logs[broker].high_watermark < item.end_offset:
                waiting.append(partition)
            else:
                item.end_offset = -1  # done
        remaining = deadline - asyncio.get_running_loop().time()
        if not waiting:
            return
        if remaining <= 0:
            for item in appended:
                if item.error == ErrorCode.NONE and item.end_offset >= 0:
                    item.error = ErrorCode.REQUEST_TIMED_OUT
            return
        await wait_for_change(waiting, remaining)


def produce_handler(state: ClusterState, authorizer: Authorizer) -> Handler:
    async def handle(ctx: RequestContext, request: Message) -> Message:
        acks = request["Acks"]
        allowed = TopicAuthorization(authorizer, ctx, "WRITE")
        appended: list[_Appended] = []
        for topic in request["TopicData"]:
            name = topic["Name"]
            for partition in topic["PartitionData"]:
                index = partition["Index"]
                if acks not in (0, 1, -1):
                    appended.append(_Appended(name, index, ErrorCode.INVALID_REQUIRED_ACKS))
                elif not allowed(name):
                    appended.append(_Appended(name, index, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                else:
                    appended.append(_append_one(state, ctx, name, index, partition["Records"]))
        if acks == -1:
            await _await_replication(state, ctx.broker_id, appended, request["TimeoutMs"])
        return _response(state, ctx.broker_id, appended)

    return handle


def _response(state: ClusterState, broker: int, appended: list[_Appended]) -> Message:
    def entry(item: _Appended) -> Message:
        partition = state.partition(item.topic, item.index)
        log = partition.logs.get(broker) if partition is not None else None
        ok = item.error == ErrorCode.NONE
        return {
            "Index": item.index,
            "ErrorCode": item.error,
            "BaseOffset": item.base_offset if ok else -1,
            "LogAppendTimeMs": item.append_time if ok else -1,
            "LogStartOffset": log.log_start_offset if ok and log is not None else -1,
            "RecordErrors": [],
            "ErrorMessage": None,
        }

    results = [(item.topic, entry(item)) for item in appended]
    topics = group_by_topic(results, lambda name, parts: {"Name": name, "PartitionResponses": parts})
    return {"Responses": topics, "ThrottleTimeMs": 0}
