"""Client-side helpers for the data-plane wire tests: aiokafka producer, confluent-kafka admin calls."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from aiokafka import AIOKafkaProducer
from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from kafka_emulator import EmulatedCluster


async def until(condition: Callable[[], bool], limit_s: float = 10.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def produce(
    cluster: EmulatedCluster, topic: str, partition: int, count: int, first_ts: int = 1_000
) -> None:
    """``count`` records with timestamps first_ts, first_ts+1, ... acknowledged by all in-sync replicas."""
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all", linger_ms=0)
    await producer.start()
    try:
        batch = producer.create_batch()
        for i in range(count):
            batch.append(key=None, value=b"value-%d" % i, timestamp=first_ts + i)
        await (await producer.send_batch(batch, topic, partition=partition))
    finally:
        await producer.stop()


def replica(cluster: EmulatedCluster, topic: str, partition: int) -> dict[str, Any]:
    state: dict[str, Any] = cluster.state()["topics"][topic]["partitions"][partition]
    return state


def hws(cluster: EmulatedCluster, topic: str, partition: int) -> dict[int, int]:
    """Each replica's high watermark (a follower learns the leader's from a fetch answer)."""
    states = replica(cluster, topic, partition)["replica_states"]
    return {int(b): s["high_watermark"] for b, s in states.items()}


def leader_hw(cluster: EmulatedCluster, topic: str, partition: int) -> int:
    """The current leader's high watermark (-1 when offline); a new leader's may lag the old one's."""
    leader = cluster.model.leader_of(topic, partition)
    return hws(cluster, topic, partition)[leader] if leader >= 0 else -1


def lsos(cluster: EmulatedCluster, topic: str, partition: int) -> dict[int, int]:
    states = replica(cluster, topic, partition)["replica_states"]
    return {int(b): s["log_start_offset"] for b, s in states.items()}


def _outcome(future: Any, read: Callable[[Any], int]) -> int | str:
    try:
        return read(future.result())
    except KafkaException as exc:
        return str(exc.args[0].name())


def confluent_delete(
    bootstrap: str, offsets: list[tuple[str, int, int]], timeout_s: float = 10
) -> dict[tuple[str, int], int | str]:
    """librdkafka's AdminClient.delete_records: low watermark, or the error name."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.delete_records(
        [TopicPartition(t, p, o) for t, p, o in offsets],
        request_timeout=timeout_s,
        operation_timeout=timeout_s,
    )
    return {(tp.topic, tp.partition): _outcome(f, lambda r: r.low_watermark) for tp, f in futures.items()}


def confluent_list_offsets(
    bootstrap: str, queries: list[tuple[str, int, int]]
) -> dict[tuple[str, int], int | str]:
    """librdkafka's AdminClient.list_offsets: -2 earliest, -1 latest, else a timestamp; offset or error."""

    def spec(value: int) -> OffsetSpec:
        if value == -2:
            return OffsetSpec.earliest()
        if value == -1:
            return OffsetSpec.latest()
        return OffsetSpec.for_timestamp(value)

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.list_offsets({TopicPartition(t, p): spec(v) for t, p, v in queries}, request_timeout=10)
    return {(tp.topic, tp.partition): _outcome(f, lambda r: r.offset) for tp, f in futures.items()}
