"""ListOffsets by time as Apache Kafka answers it, through librdkafka (confluent-kafka): the exact record
inside a compressed batch (``FileRecords.searchForTimestamp`` decompresses it), MAX_TIMESTAMP as the
max-timestamp record's own offset (no answer while it is at or above the high watermark; still answered
after a deletion past it, which the active segment survives), the leader epoch of the record's batch
(EARLIEST: the epoch cache's earliest entry), and LogAppendTime topics stamped with the broker's clock."""

from __future__ import annotations

import asyncio
import struct
import time
from typing import Any

import pytest
from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from helpers.emulator.dataplane_clients import confluent_delete, hws, until

from kafka_emulator import EmulatedCluster

CODES = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}  # RecordBatch attributes' compression codes
Answer = tuple[int, int, int | None]  # offset, timestamp, leader epoch (None: -1)


def produce_batch(bootstrap: str, topic: str, timestamps: list[int], **config: Any) -> None:
    """One librdkafka batch (lingered, then flushed) with these record timestamps, to partition 0."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 200, **config})
    for i, ts in enumerate(timestamps):
        # Compressible values: librdkafka sends a batch uncompressed when compression would not shrink it.
        producer.produce(topic, value=b"v%d" % i + bytes(200), partition=0, timestamp=ts)
    assert producer.flush(10) == 0


def list_offsets(bootstrap: str, topic: str, spec: OffsetSpec) -> Answer:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    [future] = admin.list_offsets({TopicPartition(topic, 0): spec}, request_timeout=10).values()
    info = future.result()
    return info.offset, info.timestamp, info.leader_epoch


async def ask(cluster: EmulatedCluster, topic: str, spec: OffsetSpec) -> Answer:
    return await asyncio.to_thread(list_offsets, cluster.bootstrap, topic, spec)


def batch_count(cluster: EmulatedCluster, topic: str) -> int:
    partition = cluster.model.partition(topic, 0)
    assert partition is not None
    return partition.logs[partition.leader].batch_count


def first_batch_codec(cluster: EmulatedCluster, topic: str) -> int:
    """The compression code in the attributes of the partition's first stored batch."""
    partition = cluster.model.partition(topic, 0)
    assert partition is not None
    data = partition.logs[partition.leader].read(0, 1, upper_bound=1 << 62)
    return int(struct.unpack_from(">h", data, 21)[0]) & 0x07


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
async def test_time_lookups_find_the_exact_record_inside_a_compressed_batch(
    cluster: EmulatedCluster, codec: str
) -> None:
    cluster.create_topic("t", 1, 3)
    stamps = [1_000, 1_005, 1_001, 1_009, 1_002, 1_003, 1_004, 1_006, 1_007, 1_008]
    await asyncio.to_thread(produce_batch, cluster.bootstrap, "t", stamps, **{"compression.type": codec})
    assert (batch_count(cluster, "t"), first_batch_codec(cluster, "t")) == (1, CODES[codec])
    # The first record (in offset order) whose timestamp reaches the target, not the batch's first.
    assert await ask(cluster, "t", OffsetSpec.for_timestamp(1_004)) == (1, 1_005, 0)
    assert await ask(cluster, "t", OffsetSpec.for_timestamp(1_006)) == (3, 1_009, 0)
    assert await ask(cluster, "t", OffsetSpec.max_timestamp()) == (3, 1_009, 0)


async def test_max_timestamp_at_or_above_the_high_watermark_has_no_answer(cluster: EmulatedCluster) -> None:
    cluster.create_topic("t", 1, 3)
    await asyncio.to_thread(produce_batch, cluster.bootstrap, "t", [1_000, 1_002, 1_001])
    leader = cluster.model.leader_of("t", 0)
    followers = [b for b in (1, 2, 3) if b != leader]
    for follower in followers:
        cluster.pause_follower("t", 0, follower)
    await asyncio.to_thread(produce_batch, cluster.bootstrap, "t", [5_000], acks=1)
    # The largest timestamp is at offset 3, above the HW (3): Kafka answers -1, not an older record.
    assert hws(cluster, "t", 0)[leader] == 3
    assert await ask(cluster, "t", OffsetSpec.max_timestamp()) == (-1, -1, None)
    for follower in followers:
        cluster.resume_follower("t", 0, follower)
    await until(lambda: hws(cluster, "t", 0)[leader] == 4)
    assert await ask(cluster, "t", OffsetSpec.max_timestamp()) == (3, 5_000, 0)


async def test_max_timestamp_is_still_answered_after_a_deletion_past_its_record(
    cluster: EmulatedCluster,
) -> None:
    cluster.create_topic("t", 1, 3)
    await asyncio.to_thread(produce_batch, cluster.bootstrap, "t", [1_000, 9_000, 1_001])
    await asyncio.to_thread(produce_batch, cluster.bootstrap, "t", [2_000, 2_001, 2_002])
    assert batch_count(cluster, "t") == 2
    assert await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 4)]) == {("t", 0): 4}
    assert await ask(cluster, "t", OffsetSpec.max_timestamp()) == (1, 9_000, 0)
    assert await ask(cluster, "t", OffsetSpec.for_timestamp(0)) == (4, 2_001, 0)


async def test_earliest_and_found_records_carry_their_batches_leader_epoch(cluster: EmulatedCluster) -> None:
    cluster.create_topic("t", 1, 3)
    await asyncio.to_thread(produce_batch, cluster.bootstrap, "t", [1_000, 1_001])
    await until(lambda: set(hws(cluster, "t", 0).values()) == {2})  # every follower can lead at once
    leader = cluster.model.leader_of("t", 0)
    cluster.move_leader("t", 0, next(b for b in (1, 2, 3) if b != leader))
    await asyncio.to_thread(produce_batch, cluster.bootstrap, "t", [2_000, 2_001])
    assert await ask(cluster, "t", OffsetSpec.earliest()) == (0, -1, 0)
    assert await ask(cluster, "t", OffsetSpec.for_timestamp(1_001)) == (1, 1_001, 0)
    assert await ask(cluster, "t", OffsetSpec.for_timestamp(1_500)) == (2, 2_000, 1)
    assert await ask(cluster, "t", OffsetSpec.latest()) == (4, -1, 1)
    # After a deletion past the first epoch's records, the earliest entry is the epoch at the new LSO.
    assert await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 3)]) == {("t", 0): 3}
    assert await ask(cluster, "t", OffsetSpec.earliest()) == (3, -1, 1)


def consume_all(bootstrap: str, topic: str, count: int) -> list[tuple[int, int]]:
    """(timestamp type, timestamp) of the first ``count`` records, CRCs checked."""
    config = {"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False}
    consumer = Consumer({**config, "check.crcs": True})
    consumer.assign([TopicPartition(topic, 0, 0)])
    seen: list[tuple[int, int]] = []
    deadline = time.monotonic() + 10
    try:
        while len(seen) < count and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None:
                assert message.error() is None, message.error()
                seen.append(message.timestamp())
    finally:
        consumer.close()
    return seen


async def test_a_log_append_time_topic_stamps_batches_with_the_brokers_clock(
    cluster: EmulatedCluster,
) -> None:
    cluster.create_topic("stamped", 1, 3, {"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    await asyncio.to_thread(
        produce_batch, cluster.bootstrap, "stamped", [1_000, 1_001, 1_002], **{"compression.type": "lz4"}
    )
    after = int(time.time() * 1000)
    seen = await asyncio.to_thread(consume_all, cluster.bootstrap, "stamped", 3)
    assert {kind for kind, _ in seen} == {TIMESTAMP_LOG_APPEND_TIME}
    [stamp] = {ts for _, ts in seen}
    assert before <= stamp <= after
    # The producers' timestamps are gone: searches see the append time.
    assert await ask(cluster, "stamped", OffsetSpec.for_timestamp(1_001)) == (0, stamp, 0)
    assert await ask(cluster, "stamped", OffsetSpec.max_timestamp()) == (0, stamp, 0)
