"""Writing records, for the demo's sample data (the service itself never produces)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from aiokafka import AIOKafkaProducer


@dataclass(frozen=True)
class OutgoingRecord:
    topic: str
    partition: int
    key: bytes
    value: bytes
    # The record's CreateTime in epoch ms; None: the producer's clock when it is sent.
    timestamp_ms: int | None = None


async def produce_records(bootstrap: str, records: Iterable[OutgoingRecord], client_id: str) -> int:
    """Sends every record with acks=all and waits for all of them; returns how many were written."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, client_id=client_id)
    await producer.start()
    try:
        pending = [
            await producer.send(
                record.topic,
                record.value,
                key=record.key,
                partition=record.partition,
                timestamp_ms=record.timestamp_ms,
            )
            for record in records
        ]
        for future in pending:
            await future
        return len(pending)
    finally:
        await producer.stop()
