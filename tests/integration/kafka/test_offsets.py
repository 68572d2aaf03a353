"""ListOffsets (high watermark, log start offset) and topic metadata through ``KafkaClusters``."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.kafka_gateway import CLUSTER, delete_records, produce

from app.adapters.kafka import KafkaClusters
from app.domain.ports import TopicPartition
from app.errors import ServiceUnavailable

TP = TopicPartition


async def test_high_watermarks_and_log_start_offsets(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 3, 3)
    await produce(emulator, "events", {0: 10, 1: 3})
    deleted = await delete_records(
        gateway, CLUSTER, {TP("events", 0): 4}, leader_only=False, timeout_ms=5_000
    )
    assert deleted[TP("events", 0)].error == "NONE"
    partitions = [TP("events", p) for p in range(3)]

    assert await gateway.high_watermarks(CLUSTER, partitions) == {
        partitions[0]: 10,
        partitions[1]: 3,
        partitions[2]: 0,
    }
    assert await gateway.log_start_offsets(CLUSTER, partitions) == {
        partitions[0]: 4,
        partitions[1]: 0,
        partitions[2]: 0,
    }


async def test_offsets_of_unknown_partitions_fail_loudly(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 1, 3)
    with pytest.raises(ServiceUnavailable, match="events-5: UNKNOWN_TOPIC_OR_PARTITION"):
        await gateway.high_watermarks(CLUSTER, [TP("events", 0), TP("events", 5)])


async def test_topic_partitions_lists_existing_topics_only(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 4, 3)
    emulator.create_topic("audit", 1, 1)
    found = await gateway.topic_partitions(CLUSTER, ["events", "audit", "nope"])
    assert found == {"events": 4, "audit": 1}
    assert await gateway.ping(CLUSTER)
