"""Helpers for the Kafka adapter tests: put data into the emulator and read its state."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

from aiokafka import AIOKafkaProducer

from app.domain.ports import KafkaGateway, PartitionOutcome, TopicPartition
from app.settings import ClusterSettings

CLUSTER = "demo"


def cluster_settings(emulator: Any, **overrides: Any) -> ClusterSettings:
    return ClusterSettings(bootstrap_servers=emulator.bootstrap, request_timeout_ms=5_000, **overrides)


async def delete_records(
    gateway: KafkaGateway,
    cluster: str,
    offsets: Mapping[TopicPartition, int],
    *,
    leader_only: bool,
    timeout_ms: int,
) -> dict[TopicPartition, PartitionOutcome]:
    """Every partition's outcome of ``delete_records_as_answered``, once all leaders answered."""
    outcomes: dict[TopicPartition, PartitionOutcome] = {}
    async for answer in gateway.delete_records_as_answered(
        cluster, offsets, leader_only=leader_only, timeout_ms=timeout_ms
    ):
        outcomes.update(answer)
    return outcomes


def partition_state(emulator: Any, topic: str, partition: int) -> dict[str, Any]:
    for state in emulator.state()["topics"][topic]["partitions"]:
        if state["partition"] == partition:
            return dict(state)
    raise KeyError(f"{topic}-{partition}")


def leader_of(emulator: Any, topic: str, partition: int) -> int:
    return int(partition_state(emulator, topic, partition)["leader"])


def log_start_offsets(emulator: Any, topic: str, partition: int) -> dict[int, int]:
    """Broker id -> that replica's log start offset."""
    replicas = partition_state(emulator, topic, partition)["replica_states"]
    return {int(broker): int(state["log_start_offset"]) for broker, state in replicas.items()}


async def wait_until(check: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached before the deadline")
        await asyncio.sleep(0.02)


async def produce(emulator: Any, topic: str, counts: dict[int, int]) -> None:
    """Write ``counts[p]`` records to each partition with acks=all: they are committed (the leader's high
    watermark is past them) when this returns. Followers learn that high watermark with their next fetch,
    up to ``replica.fetch.wait.max.ms`` later, as in Kafka; nothing here waits for it."""
    producer = AIOKafkaProducer(bootstrap_servers=emulator.bootstrap, linger_ms=5, acks="all")
    await producer.start()
    try:
        futures = [
            await producer.send(topic, b"record-%d" % i, partition=p)
            for p, n in counts.items()
            for i in range(n)
        ]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def wait_followers_learned(emulator: Any, topic: str, counts: dict[int, int]) -> None:
    """Wait until every live replica knows a high watermark of at least ``counts[p]``: a cluster at rest,
    where a follower elected next leads without lagging (else, as in Kafka, a new leader answers
    OFFSET_NOT_AVAILABLE / OFFSET_OUT_OF_RANGE until its followers' first fetches raise its HW)."""

    def learned() -> bool:
        for p, n in counts.items():
            replicas = partition_state(emulator, topic, p)["replica_states"].values()
            if any(r["alive"] and not r["paused"] and r["high_watermark"] < n for r in replicas):
                return False
        return True

    await wait_until(learned)
