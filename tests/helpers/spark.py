"""Helpers of the service's Spark tests: the emulated cluster process seen from a test, and waiting."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from helpers.child_process import running

ROOT = Path(__file__).resolve().parents[2]
__all__ = ["ROOT", "Emulator", "kafka_consumer", "running", "wait_until"]


def wait_until(check: Callable[[], Any], seconds: float = 60.0, message: str = "condition") -> Any:
    deadline = time.monotonic() + seconds
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < deadline, f"{message} not reached within {seconds} s"
        time.sleep(0.1)


class Emulator:
    """The emulated cluster process: bootstrap servers and its HTTP control API."""

    def __init__(self, bootstrap: str, control: str) -> None:
        self.bootstrap = bootstrap
        self.control = control

    def create_topic(self, name: str, partitions: int) -> None:
        response = httpx.post(f"{self.control}/topics", json={"name": name, "partitions": partitions})
        assert response.status_code in (200, 201), response.text

    def state(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.control}/state").json())

    def log_start_offsets(self, topic: str) -> dict[int, int]:
        from kafka import TopicPartition

        consumer = kafka_consumer(self.bootstrap)
        try:
            partitions = sorted(consumer.partitions_for_topic(topic) or [])
            found = consumer.beginning_offsets([TopicPartition(topic, p) for p in partitions])
            return {tp.partition: offset for tp, offset in found.items()}
        finally:
            consumer.close()

    def produce(self, topic: str, values: list[bytes], partitions: int) -> None:
        from kafka import KafkaProducer

        producer = KafkaProducer(
            bootstrap_servers=self.bootstrap, acks="all", linger_ms=0, enable_idempotence=False
        )
        try:
            sent = [producer.send(topic, v, partition=i % partitions) for i, v in enumerate(values)]
            producer.flush()
            for future in sent:
                future.get(timeout=10)
        finally:
            producer.close()

    def commit(self, group: str, offsets: dict[tuple[str, int], int]) -> None:
        """Commit ``offsets`` for ``group`` (a simple consumer, no membership), as a slow reader would."""
        from kafka import KafkaConsumer, TopicPartition
        from kafka.structs import OffsetAndMetadata

        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=group, enable_auto_commit=False)
        try:
            consumer.commit(
                {TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()}
            )
        finally:
            consumer.close()


def kafka_consumer(bootstrap: str) -> Any:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    consumer.topics()
    return consumer
