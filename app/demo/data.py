"""The demo topics and the records written into them."""

from __future__ import annotations

import json
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
)
RECORDS_PER_PARTITION = 200


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


async def produce_demo_records(bootstrap: str) -> int:
    """Writes ``RECORDS_PER_PARTITION`` keyed records to every partition; returns how many."""
    return await produce_records(bootstrap, _demo_records(), client_id="kafka-purge-demo")


def _demo_records() -> Iterator[OutgoingRecord]:
    for topic in DEMO_TOPICS:
        for partition in range(topic.partitions):
            for n in range(RECORDS_PER_PARTITION):
                # The compacted topic reuses keys so compaction has something to do.
                key = f"{topic.name}-{partition}-{n % 50 if 'compact' in topic.name else n}"
                value = json.dumps({"topic": topic.name, "seq": n}).encode()
                yield OutgoingRecord(topic.name, partition, key.encode(), value)
