"""Leader-side operations the data-plane handlers run: append, local DeleteRecords, waiting."""

from __future__ import annotations

import asyncio
import time

from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state.cluster_state import ClusterState
from kafka_emulator.state.log import ProducerRefused
from kafka_emulator.state.partition import Partition
from kafka_emulator.state.purgatory import PartitionOutcome
from kafka_emulator.state.records import CorruptBatchError, UnsupportedMagicError
from kafka_emulator.state.topics import Topic


def leader_partition(state: ClusterState, broker: int, topic: str, index: int) -> Partition | ErrorCode:
    """The partition if ``broker`` leads it, else the error a broker answers."""
    partition = state.partition(topic, index)
    if partition is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if partition.leader != broker:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    return partition


def append(
    state: ClusterState, broker: int, topic: Topic, index: int, records: bytes
) -> tuple[ErrorCode, int, int]:
    """Append a produce payload on the leader: (error, base offset, log append time or -1). A topic with
    ``message.timestamp.type=LogAppendTime`` has its batches stamped with the broker's clock."""
    found = leader_partition(state, broker, topic.name, index)
    if isinstance(found, ErrorCode):
        return found, -1, -1
    log = found.logs[broker]
    now = int(time.time() * 1000) if topic.config("message.timestamp.type") == "LogAppendTime" else None
    try:
        base = log.append_produced(records, found.leader_epoch, now)
    except ProducerRefused as refused:
        return refused.error, -1, -1
    except UnsupportedMagicError:
        return ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, -1, -1
    except CorruptBatchError:
        return ErrorCode.CORRUPT_MESSAGE, -1, -1
    if found.maybe_raise_high_watermark(time.monotonic(), state.replicator.max_lag_s):
        found.notify_change()
        state.purgatory.check(found)
    state.leader_changed(found)
    return ErrorCode.NONE, base, -1 if now is None else now


def delete_records_local(
    state: ClusterState, broker: int, topic: Topic, partition: Partition, offset: int
) -> PartitionOutcome:
    """Kafka's deleteRecordsOnLocalLog + deleteRecordsOnLeader, in Kafka's order of checks.

    The caller has already checked authorization and that the partition exists.
    """
    if topic.internal:
        return PartitionOutcome(ErrorCode.INVALID_TOPIC_EXCEPTION)
    if partition.leader != broker:
        return PartitionOutcome(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    if not topic.deletable:
        return PartitionOutcome(ErrorCode.POLICY_VIOLATION)
    log = partition.logs[broker]
    requested = log.high_watermark if offset == -1 else offset
    if requested < 0 or requested > log.high_watermark:
        return PartitionOutcome(ErrorCode.OFFSET_OUT_OF_RANGE)
    if requested > log.log_start_offset:
        log.increment_log_start_offset(requested)
        state.replicator.mark(partition)
    return PartitionOutcome(ErrorCode.NONE, partition.low_watermark(), requested, partition)


async def wait_for_change(partitions: list[Partition], timeout_s: float) -> None:
    """Sleep until one of ``partitions`` changes (HW, LSO, leadership) or ``timeout_s`` passes."""
    if timeout_s <= 0:
        return
    if not partitions:
        await asyncio.sleep(timeout_s)
        return
    waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    for partition in partitions:
        partition.change_waiters.add(waiter)
    try:
        # asyncio.timeout, not wait_for, which on Python 3.11 can swallow a cancel that comes in the turn
        # the partition changes: a stopped broker's connection task would go on serving.
        async with asyncio.timeout(timeout_s):
            await waiter
    except TimeoutError:
        pass
    finally:
        for partition in partitions:
            partition.change_waiters.discard(waiter)
