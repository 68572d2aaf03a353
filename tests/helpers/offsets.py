"""Helpers for the offset-spec tests: records with chosen timestamps, groups at known positions."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition as KafkaTP

BASE_MS = 1_700_000_000_000  # 2023-11-14T22:13:20Z


async def produce_timed(emulator: Any, topic: str, partition: int, timestamps: list[int]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=emulator.bootstrap, acks="all")
    await producer.start()
    try:
        for i, ts in enumerate(timestamps):
            await producer.send(topic, b"r%d" % i, partition=partition, timestamp_ms=ts)
        await producer.flush()
    finally:
        await producer.stop()


async def produce(emulator: Any, topic: str, counts: dict[int, int]) -> None:
    for partition, count in counts.items():
        await produce_timed(emulator, topic, partition, [BASE_MS + i * 1000 for i in range(count)])


async def commit(emulator: Any, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Commit offsets for ``group`` with a real consumer (manual assignment: the group stays Empty)."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=emulator.bootstrap, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        tps = [KafkaTP(t, p) for t, p in offsets]
        consumer.assign(tps)
        await consumer.commit({KafkaTP(t, p): o for (t, p), o in offsets.items()})
    finally:
        await consumer.stop()


def body(*entries: dict[str, Any], **fields: Any) -> dict[str, Any]:
    request: dict[str, Any] = {"cluster": "demo", "partitions": list(entries), "reason": "test erasure"}
    request.update(fields)
    return request


async def wait_until(check: Callable[[], Any], within: float = 15.0) -> Any:
    deadline = time.monotonic() + within
    while True:
        if result := await check():
            return result
        if time.monotonic() > deadline:
            raise AssertionError("condition not met before the deadline")
        await asyncio.sleep(0.05)
