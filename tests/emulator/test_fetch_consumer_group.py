"""A real aiokafka consumer group of two members consumes, commits, and after DeleteRecords past its
committed offsets resumes from the new log start offset (auto_offset_reset=earliest)."""

from __future__ import annotations

import asyncio
import time

from aiokafka import AIOKafkaConsumer
from aiokafka.structs import TopicPartition
from helpers.emulator.dataplane_clients import confluent_delete, produce

from kafka_emulator import EmulatedCluster

GROUP = "readers"


def member(cluster: EmulatedCluster) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(
        "t",
        bootstrap_servers=cluster.bootstrap,
        group_id=GROUP,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        heartbeat_interval_ms=200,
        session_timeout_ms=6_000,
        max_poll_records=5,
    )


async def consume_until(members: list[AIOKafkaConsumer], wanted: int) -> dict[int, list[int]]:
    """Poll every member until ``wanted`` records arrived in total; partition -> offsets."""
    seen: dict[int, list[int]] = {0: [], 1: []}
    deadline = time.monotonic() + 20
    while sum(len(v) for v in seen.values()) < wanted:
        assert time.monotonic() < deadline, f"only got {seen}"
        polls = await asyncio.gather(*(m.getmany(timeout_ms=200, max_records=5) for m in members))
        for batches in polls:
            for tp, messages in batches.items():
                seen[tp.partition] += [m.offset for m in messages]
    return seen


async def test_group_resumes_from_new_lso_after_delete_records(cluster: EmulatedCluster) -> None:
    cluster.create_topic("t", 2, 3)
    for partition in (0, 1):
        await produce(cluster, "t", partition, 5)
    members = [member(cluster), member(cluster)]
    await asyncio.gather(*(m.start() for m in members))
    try:
        first = await consume_until(members, 10)
        assert first == {0: list(range(5)), 1: list(range(5))}
        assignments = [m.assignment() for m in members]
        assert all(len(a) == 1 for a in assignments), assignments
        await asyncio.gather(*(m.commit() for m in members))
    finally:
        await asyncio.gather(*(m.stop() for m in members))
    assert cluster.state()["groups"][GROUP]["offsets"] == {"t": {"0": 5, "1": 5}}
    for partition in (0, 1):
        await produce(cluster, "t", partition, 10)  # offsets 5..14
    deleted = await asyncio.to_thread(confluent_delete, cluster.bootstrap, [("t", 0, 8), ("t", 1, 12)])
    assert deleted == {("t", 0): 8, ("t", 1): 12}
    members = [member(cluster), member(cluster)]
    await asyncio.gather(*(m.start() for m in members))
    try:
        resumed = await consume_until(members, 7 + 3)
        committed = {p: await members[0].committed(TopicPartition("t", p)) for p in (0, 1)}
    finally:
        await asyncio.gather(*(m.stop() for m in members))
    assert resumed == {0: list(range(8, 15)), 1: list(range(12, 15))}
    assert committed == {0: 5, 1: 5}
