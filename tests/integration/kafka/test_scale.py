"""10,000 partitions over 3 brokers: one DeleteRecords per leader, every partition's result read."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest
from helpers.kafka_gateway import CLUSTER, delete_records

from app.adapters.kafka import KafkaClusters
from app.domain.ports import TopicPartition

PARTITIONS = 10_000


@pytest.fixture
def delete_records_max_version() -> int:
    """These tests exercise the LeaderOnly draft: every broker serves DeleteRecords v3."""
    return 3


async def test_ten_thousand_partitions_one_request_per_broker(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("wide", PARTITIONS, 1)
    offsets = {TopicPartition("wide", p): 0 for p in range(PARTITIONS)}
    leaders = Counter(p["leader"] for p in emulator.state()["topics"]["wide"]["partitions"])
    assert sorted(leaders) == [1, 2, 3]
    # Each broker fails exactly its next DeleteRecords request as a whole. If a broker received more
    # than one request, the partitions of the later ones would come back NONE.
    for broker in (1, 2, 3):
        emulator.inject_fault(broker, "DeleteRecords", error="KAFKA_STORAGE_ERROR")

    failed = await delete_records(gateway, CLUSTER, offsets, leader_only=False, timeout_ms=30_000)

    assert len(failed) == PARTITIONS
    assert Counter(o.error for o in failed.values()) == {"KAFKA_STORAGE_ERROR": PARTITIONS}
    assert emulator.state()["faults"] == []

    started = time.perf_counter()
    done = await delete_records(gateway, CLUSTER, offsets, leader_only=True, timeout_ms=30_000)
    elapsed = time.perf_counter() - started

    assert Counter(o.error for o in done.values()) == {"NONE": PARTITIONS}
    assert {o.leader_log_start_offset for o in done.values()} == {0}
    print(f"10,000-partition DeleteRecords over 3 brokers: {elapsed * 1000:.0f} ms")
