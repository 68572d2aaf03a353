"""Concurrent callers asking for the same topics share one in-flight Metadata request: each still gets
its own correct answer, a cancelled caller does not cancel the others, and once the answer is in, the
next call asks again (a topic created meanwhile is seen)."""

from __future__ import annotations

import asyncio
from typing import Any

from helpers.kafka_gateway import CLUSTER, delete_records, produce

from app.adapters.kafka import KafkaClusters
from app.domain.ports import TopicPartition

TP = TopicPartition


async def test_concurrent_offset_reads_share_metadata(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 3, 3)
    await produce(emulator, "events", {0: 5, 2: 2})
    await delete_records(gateway, CLUSTER, {TP("events", 0): 3}, leader_only=False, timeout_ms=5_000)
    partitions = [TP("events", p) for p in range(3)]
    starts, ends = await asyncio.gather(
        gateway.log_start_offsets(CLUSTER, partitions), gateway.high_watermarks(CLUSTER, partitions)
    )
    assert starts == {partitions[0]: 3, partitions[1]: 0, partitions[2]: 0}
    assert ends == {partitions[0]: 5, partitions[1]: 0, partitions[2]: 2}
    assert gateway._shared_metadata.pending == {}


async def test_a_cancelled_caller_leaves_the_others_their_answer(
    emulator: Any, gateway: KafkaClusters
) -> None:
    emulator.create_topic("events", 2, 3)
    partitions = [TP("events", p) for p in range(2)]
    await gateway.high_watermarks(CLUSTER, partitions)  # connected
    first = asyncio.ensure_future(gateway.high_watermarks(CLUSTER, partitions))
    second = asyncio.ensure_future(gateway.log_start_offsets(CLUSTER, partitions))
    await asyncio.sleep(0)
    first.cancel()
    assert await second == {partitions[0]: 0, partitions[1]: 0}
    assert first.cancelled()


async def test_the_next_call_asks_again(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 1, 3)
    assert await gateway.topic_partitions(CLUSTER, ["events", "later"]) == {"events": 1}
    emulator.create_topic("later", 4, 3)
    assert await gateway.topic_partitions(CLUSTER, ["events", "later"]) == {"events": 1, "later": 4}
