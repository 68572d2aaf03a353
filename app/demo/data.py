"""The demo topics and the records written into them."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from app.adapters.kafka.producer import OutgoingRecord, produce_records


@dataclass(frozen=True)
class DemoTopic:
    name: str
    partitions: int
    configs: dict[str, str] = field(default_factory=dict)


DEMO_TOPICS = (
    DemoTopic("orders.eu", 6),
    DemoTopic("orders.us", 3),
    # Under a legal hold: a DENY binding keeps everyone but super users from deleting here.
    DemoTopic("orders.audit", 1),
    DemoTopic("payments", 3),
    # Kafka refuses DeleteRecords on compacted topics (POLICY_VIOLATION): the demo shows that too.
    DemoTopic("customers.compacted", 3, {"cleanup.policy": "compact"}),
    # Personal data: the approval rule customers-pii-four-eyes asks a privacy officer before any deletion.
    DemoTopic("customers-pii", 3),
)
RECORDS_PER_PARTITION = 200
# The records of a partition span the last week, oldest first, the newest written "now": a time cut such
# as "three days ago" lands inside every partition.
HISTORY_SECONDS = 7 * 86400


def write_topology(path: Path, brokers: int = 3) -> Path:
    topics = [
        {
            "name": t.name,
            "partitions": t.partitions,
            "replication_factor": min(3, brokers),
            "configs": t.configs,
        }
        for t in DEMO_TOPICS
    ]
    # JSON is valid YAML, so the emulator's YAML reader takes it as is.
    path.write_text(json.dumps({"brokers": brokers, "topics": topics}, indent=2), encoding="utf-8")
    return path


async def produce_demo_records(bootstrap: str, now_ms: int | None = None) -> int:
    """Writes ``RECORDS_PER_PARTITION`` keyed records to every partition, with timestamps spread evenly
    over the ``HISTORY_SECONDS`` before ``now_ms`` (default: now); returns how many."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    return await produce_records(bootstrap, _demo_records(now_ms), client_id="kafka-purge-demo")


def record_timestamp_ms(n: int, now_ms: int) -> int:
    """The timestamp of a partition's ``n``-th record: the last one at ``now_ms``, the first a week back."""
    step_ms = HISTORY_SECONDS * 1000 // RECORDS_PER_PARTITION
    return now_ms - (RECORDS_PER_PARTITION - 1 - n) * step_ms


def _demo_records(now_ms: int) -> Iterator[OutgoingRecord]:
    for topic in DEMO_TOPICS:
        for partition in range(topic.partitions):
            for n in range(RECORDS_PER_PARTITION):
                # The compacted topic reuses keys so compaction has something to do.
                key = f"{topic.name}-{partition}-{n % 50 if 'compact' in topic.name else n}"
                value = json.dumps({"topic": topic.name, "seq": n}).encode()
                yield OutgoingRecord(
                    topic.name, partition, key.encode(), value, record_timestamp_ms(n, now_ms)
                )
