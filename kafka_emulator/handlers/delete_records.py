"""DeleteRecords v0-v3 (API 21), following KafkaApis.handleDeleteRecordsRequest and ReplicaManager.

v3 (LeaderOnly KIP draft): ``LeaderOnly=true`` answers right after the leader truncated, with the current
low watermark; ``LeaderLogStartOffset`` is the leader's log start offset when the answer is built, -1 on
errors.
"""

from __future__ import annotations

from kafka_emulator.handlers.common import TopicAuthorization, group_by_topic
from kafka_emulator.protocol.api import Authorizer, Handler, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import ClusterState
from kafka_emulator.state.dataplane import delete_records_local
from kafka_emulator.state.partition import Partition
from kafka_emulator.state.purgatory import DeleteWaiter, PartitionOutcome

API_KEY = 21
Key = tuple[str, int]


def requested_offsets(request: Message) -> dict[Key, int]:
    """Partition -> offset; a partition listed twice keeps its last offset (Kafka uses a map)."""
    offsets: dict[Key, int] = {}
    for topic in request["Topics"]:
        name = topic["Name"]
        for partition in topic["Partitions"]:
            offsets[(name, partition["PartitionIndex"])] = partition["Offset"]
    return offsets


def delete_locally(
    state: ClusterState, ctx: RequestContext, authorizer: Authorizer, offsets: dict[Key, int]
) -> dict[Key, PartitionOutcome]:
    allowed = TopicAuthorization(authorizer, ctx, "DELETE")
    outcomes: dict[Key, PartitionOutcome] = {}
    for key, offset in offsets.items():
        name, index = key
        topic = state.topics.get(name)
        if not allowed(name):
            outcomes[key] = PartitionOutcome(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        elif topic is None or not 0 <= index < len(topic.partitions):
            outcomes[key] = PartitionOutcome(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        else:
            outcomes[key] = delete_records_local(state, ctx.broker_id, topic, topic.partitions[index], offset)
    return outcomes


def must_wait(outcomes: dict[Key, PartitionOutcome]) -> bool:
    return any(o.error == ErrorCode.NONE and o.low_watermark < o.requested_offset for o in outcomes.values())


async def wait_for_replicas(
    state: ClusterState, broker: int, outcomes: dict[Key, PartitionOutcome], timeout_ms: int
) -> None:
    """DelayedDeleteRecords: successful partitions become pending, pre-set to REQUEST_TIMED_OUT."""
    pending: dict[Partition, PartitionOutcome] = {}
    for outcome in outcomes.values():
        if outcome.error == ErrorCode.NONE and outcome.partition is not None:
            pending[outcome.partition] = outcome
            outcome.error = ErrorCode.REQUEST_TIMED_OUT
    await state.purgatory.wait(DeleteWaiter(broker, pending), timeout_ms)


def partition_result(index: int, outcome: PartitionOutcome, broker: int) -> Message:
    """LowWatermark and LeaderLogStartOffset are -1 on every error except REQUEST_TIMED_OUT; the
    leader log start offset is read when the answer is built (the KIP's "when the request completes")."""
    partition = outcome.partition
    if outcome.error in (ErrorCode.NONE, ErrorCode.REQUEST_TIMED_OUT) and partition is not None:
        low_watermark, leader_start = outcome.low_watermark, partition.logs[broker].log_start_offset
    else:
        low_watermark = leader_start = -1
    return {
        "PartitionIndex": index,
        "LowWatermark": low_watermark,
        "LeaderLogStartOffset": leader_start,
        "ErrorCode": outcome.error,
    }


def response(outcomes: dict[Key, PartitionOutcome], broker: int) -> Message:
    results = [(topic, partition_result(index, o, broker)) for (topic, index), o in outcomes.items()]
    topics = group_by_topic(results, lambda name, partitions: {"Name": name, "Partitions": partitions})
    return {"ThrottleTimeMs": 0, "Topics": topics}


def delete_records_handler(state: ClusterState, authorizer: Authorizer) -> Handler:
    async def handle(ctx: RequestContext, request: Message) -> Message:
        outcomes = delete_locally(state, ctx, authorizer, requested_offsets(request))
        leader_only = ctx.api_version >= 3 and bool(request.get("LeaderOnly"))
        if not leader_only and must_wait(outcomes):
            await wait_for_replicas(state, ctx.broker_id, outcomes, request["TimeoutMs"])
        return response(outcomes, ctx.broker_id)

    return handle
