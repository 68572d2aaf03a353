"""OffsetForLeaderEpoch (API 23): the end offset of a leader epoch on the partition's leader, which
consumers use to detect log truncation after a leader change (KIP-320) and followers to truncate.

The answer comes from the leader's epoch cache (``LeaderEpochFileCache.endOffsetFor``): the current epoch
ends at the log end offset; an older epoch at the start of the next higher one, reported with the
largest cached epoch not above the requested one; an epoch below every cached one at the first cached
epoch's start; no answer (-1, -1) when nothing is cached.
"""

from __future__ import annotations

from kafka_emulator.handlers.common import TopicAuthorization, group_by_topic
from kafka_emulator.handlers.fetch import check_epoch
from kafka_emulator.protocol.api import Authorizer, Handler, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import ClusterState
from kafka_emulator.state.log import ReplicaLog

API_KEY = 23
UNDEFINED = -1


def end_offset_for(log: ReplicaLog, epoch: int) -> tuple[int, int]:
    """(epoch, end offset) of ``epoch`` in ``log``'s epoch cache, or (-1, -1)."""
    epochs = log.epochs
    if epoch == UNDEFINED or not epochs:
        return UNDEFINED, UNDEFINED
    if epochs[-1][0] == epoch:
        return epoch, log.log_end_offset
    higher = next(((e, start) for e, start in epochs if e > epoch), None)
    if higher is None:
        return UNDEFINED, UNDEFINED
    floor = [e for e, _ in epochs if e <= epoch]
    return (floor[-1] if floor else epoch), higher[1]


def offset_for_leader_epoch_handler(state: ClusterState, authorizer: Authorizer) -> Handler:
    def answer(ctx: RequestContext, allowed: TopicAuthorization, topic: str, part: Message) -> Message:
        entry: Message = {
            "ErrorCode": ErrorCode.NONE,
            "Partition": part["Partition"],
            "LeaderEpoch": UNDEFINED,
            "EndOffset": UNDEFINED,
        }
        partition = state.partition(topic, part["Partition"])
        if not allowed(topic):
            entry["ErrorCode"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif partition is None:
            entry["ErrorCode"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        elif ctx.broker_id not in partition.replicas:
            entry["ErrorCode"] = ErrorCode.NOT_LEADER_OR_FOLLOWER
        # Kafka checks the epoch before leadership (Partition.getLocalLog): a stale epoch on a follower
        # is FENCED_LEADER_EPOCH, not NOT_LEADER_OR_FOLLOWER.
        elif (error := check_epoch(partition, part.get("CurrentLeaderEpoch", -1))) != ErrorCode.NONE:
            entry["ErrorCode"] = error
        elif partition.leader != ctx.broker_id:
            entry["ErrorCode"] = ErrorCode.NOT_LEADER_OR_FOLLOWER
        else:
            found = end_offset_for(partition.logs[ctx.broker_id], part["LeaderEpoch"])
            entry.update(LeaderEpoch=found[0], EndOffset=found[1])
        return entry

    async def handle(ctx: RequestContext, request: Message) -> Message:
        allowed = TopicAuthorization(authorizer, ctx, "DESCRIBE")
        results = [
            (topic["Topic"], answer(ctx, allowed, topic["Topic"], part))
            for topic in request["Topics"]
            for part in topic["Partitions"]
        ]
        topics = group_by_topic(results, lambda name, parts: {"Topic": name, "Partitions": parts})
        return {"ThrottleTimeMs": 0, "Topics": topics}

    return handle
