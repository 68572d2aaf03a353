"""Test helper: write records into the emulated cluster with a real Kafka client."""

from __future__ import annotations

from typing import Any

from aiokafka import AIOKafkaProducer


async def produce(emulator: Any, topic: str, counts: dict[int, int]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=emulator.bootstrap, linger_ms=5, acks="all")
    await producer.start()
    try:
        for partition, count in counts.items():
            for i in range(count):
                await producer.send(topic, b"r%d" % i, partition=partition)
        await producer.flush()
    finally:
        await producer.stop()
