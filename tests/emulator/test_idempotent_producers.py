"""Idempotent producers and KIP-320 consumers as Apache Kafka serves them: InitProducerId, sequence checks
on Produce (duplicates answered with their first offset, gaps and fenced epochs refused), and
OffsetForLeaderEpoch. Through librdkafka (confluent-kafka) with ``enable.idempotence``, kafka-python 3
with its defaults (idempotent producer, consumer validating positions after a leader change), and the
log's own checks on batches built by aiokafka's encoder."""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import Awaitable, Callable

import pytest
from aiokafka.record.default_records import DefaultRecordBatchBuilder
from confluent_kafka import Producer
from helpers.emulator.dataplane_clients import hws, until
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTP

from kafka_emulator import EmulatedCluster
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state.log import ProducerRefused, ReplicaLog

ClusterFactory = Callable[..., Awaitable[EmulatedCluster]]


def stored_producers(cluster: EmulatedCluster, topic: str, partition: int) -> list[tuple[int, int, int]]:
    """(producer id, producer epoch, base sequence) of each batch on the partition's leader."""
    found = cluster.model.partition(topic, partition)
    assert found is not None
    data = found.logs[found.leader].read(0, 1 << 30, upper_bound=1 << 62)
    batches, pos = [], 0
    while pos < len(data):
        length = struct.unpack_from(">i", data, pos + 8)[0]
        batches.append(struct.unpack_from(">qhi", data, pos + 43))
        pos += 12 + length
    return [(int(p), int(e), int(s)) for p, e, s in batches]


def librdkafka_idempotent_produce(bootstrap: str, topic: str, count: int) -> list[str]:
    errors: list[str] = []

    def delivered(error: object, _message: object) -> None:
        if error is not None:
            errors.append(str(error))

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, value=b"m%d" % i, partition=i % 2, on_delivery=delivered)
        if i % 10 == 9:
            producer.flush(10)  # several batches per partition: sequences must continue
    remaining = producer.flush(10)
    return errors + [f"{remaining} undelivered"] * bool(remaining)


async def test_librdkafka_idempotent_producer_gets_an_id_and_writes_in_sequence(
    cluster: EmulatedCluster,
) -> None:
    cluster.create_topic("t", 2, 3)
    assert await asyncio.to_thread(librdkafka_idempotent_produce, cluster.bootstrap, "t", 40) == []
    for partition in (0, 1):
        batches = stored_producers(cluster, "t", partition)
        assert {(pid, epoch) for pid, epoch, _ in batches} == {(0, 0)}
        assert batches[0][2] == 0
        assert len(batches) > 1
        assert hws(cluster, "t", partition)[cluster.model.leader_of("t", partition)] == 20


def kafka_python_send(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap)  # idempotent by default (KIP-679)
    try:
        for value in values:
            producer.send(topic, value, partition=0)
        producer.flush(10)
    finally:
        producer.close(5)


def kafka_python_consumer(bootstrap: str, topic: str) -> KafkaConsumer:
    """Reads partition 0 from offset 0 (built in a thread: the constructor connects, blocking)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    consumer.assign([KafkaTP(topic, 0)])
    consumer.seek(KafkaTP(topic, 0), 0)
    return consumer


def kafka_python_read(consumer: KafkaConsumer, count: int) -> list[bytes]:
    seen: list[bytes] = []
    deadline = time.monotonic() + 15
    while len(seen) < count and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=200).values():
            seen.extend(record.value for record in records)
    return seen


async def test_kafka_python_defaults_produce_idempotently_and_validate_positions_after_a_leader_change(
    make_cluster: ClusterFactory,
) -> None:
    cluster = await make_cluster(replica_fetch_wait_max_ms=20, request_log_apis=("OffsetForLeaderEpoch",))
    cluster.create_topic("t", 1, 3)
    await asyncio.to_thread(kafka_python_send, cluster.bootstrap, "t", [b"a%d" % i for i in range(5)])
    assert {(pid, epoch) for pid, epoch, _ in stored_producers(cluster, "t", 0)} == {(0, 0)}
    consumer = await asyncio.to_thread(kafka_python_consumer, cluster.bootstrap, "t")
    try:
        assert len(await asyncio.to_thread(kafka_python_read, consumer, 5)) == 5
        await until(lambda: set(hws(cluster, "t", 0).values()) == {5})
        old = cluster.model.leader_of("t", 0)
        new = next(b for b in (1, 2, 3) if b != old)
        cluster.move_leader("t", 0, new)
        await asyncio.to_thread(kafka_python_send, cluster.bootstrap, "t", [b"b%d" % i for i in range(5)])
        later = await asyncio.to_thread(kafka_python_read, consumer, 5)
    finally:
        await asyncio.to_thread(consumer.close)
    assert later == [b"b%d" % i for i in range(5)]
    # The consumer checked its position against the new leader's epoch cache (KIP-320). (It may first ask
    # the old leader, its fetch there fenced, which answers FENCED_LEADER_EPOCH as Kafka does.)
    answers = [
        (p["ErrorCode"], p["LeaderEpoch"], p["EndOffset"])
        for entry in cluster.request_log("OffsetForLeaderEpoch")
        if entry.broker_id == new
        for topic in (entry.response or {})["Topics"]
        for p in topic["Partitions"]
    ]
    assert set(answers) == {(0, 0, 5)}  # epoch 0 ended where epoch 1 began: no truncation


def idempotent_batch(producer_id: int, epoch: int, first_seq: int, count: int) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=0,
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=first_seq,
        batch_size=1 << 20,
    )
    for i in range(count):
        builder.append(i, timestamp=1_000 + i, key=None, value=b"v", headers=[])
    return bytes(builder.build())


def test_sequences_are_checked_per_producer_as_kafka_does() -> None:
    log = ReplicaLog()
    assert log.append_produced(idempotent_batch(7, 0, 0, 5), 0) == 0
    assert log.append_produced(idempotent_batch(7, 0, 5, 5), 0) == 5
    # A retried batch is a duplicate: its first offset again, nothing appended.
    assert log.append_produced(idempotent_batch(7, 0, 0, 5), 0) == 0
    assert log.log_end_offset == 10
    refusals = [
        (idempotent_batch(7, 0, 12, 1), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER),  # a gap
        (idempotent_batch(7, 1, 3, 1), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER),  # new epoch not at 0
    ]
    for batch, error in refusals:
        with pytest.raises(ProducerRefused) as refused:
            log.append_produced(batch, 0)
        assert refused.value.error == error
    assert log.append_produced(idempotent_batch(7, 1, 0, 2), 0) == 10  # a bumped epoch starts over
    with pytest.raises(ProducerRefused) as fenced:
        log.append_produced(idempotent_batch(7, 0, 10, 1), 0)
    assert fenced.value.error == ErrorCode.INVALID_PRODUCER_EPOCH
    # A producer the log has no state for (its records deleted, say) may continue at any sequence.
    assert log.append_produced(idempotent_batch(8, 3, 42, 1), 0) == 12
    assert log.log_end_offset == 13
