"""ListOffsets and DeleteRecords routed with remembered leaders: a leader that moved or stopped since is
asked again through fresh metadata, and the offsets are always the current leader's answer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.kafka_gateway import (
    CLUSTER,
    cluster_settings,
    delete_records,
    leader_of,
    log_start_offsets,
    partition_state,
    produce,
    wait_followers_learned,
    wait_until,
)

from app.adapters.kafka import KafkaClusters
from app.domain.ports import TopicPartition

TP = TopicPartition


@pytest.fixture
def delete_records_max_version() -> int:
    """These tests exercise the LeaderOnly draft: every broker serves DeleteRecords v3."""
    return 3


@pytest.fixture
async def gateway(emulator: Any) -> AsyncIterator[KafkaClusters]:
    """Leaders remembered for 5 minutes: nothing depends on how fast the test runs."""
    clusters = KafkaClusters({CLUSTER: cluster_settings(emulator, metadata_max_age_ms=300_000)})
    try:
        yield clusters
    finally:
        await clusters.close()


async def test_offsets_follow_a_moved_leader(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 1, 3)
    await produce(emulator, "events", {0: 4})
    tp = TP("events", 0)
    assert await gateway.high_watermarks(CLUSTER, [tp]) == {tp: 4}
    old = leader_of(emulator, "events", 0)
    emulator.move_leader("events", 0, next(b for b in sorted(emulator.brokers) if b != old))
    await produce(emulator, "events", {0: 2})

    def replicated() -> bool:
        replicas = partition_state(emulator, "events", 0)["replica_states"].values()
        return all(r["high_watermark"] == 6 for r in replicas)

    await wait_until(replicated)
    assert await gateway.high_watermarks(CLUSTER, [tp]) == {tp: 6}
    assert await gateway.log_start_offsets(CLUSTER, [tp]) == {tp: 0}


async def test_offsets_route_around_a_stopped_leader(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 2, 3)
    await produce(emulator, "events", {0: 3, 1: 5})
    await wait_followers_learned(emulator, "events", {0: 3, 1: 5})
    partitions = [TP("events", 0), TP("events", 1)]
    assert await gateway.high_watermarks(CLUSTER, partitions) == dict(zip(partitions, [3, 5], strict=True))
    await emulator.stop_broker(leader_of(emulator, "events", 0))
    assert await gateway.high_watermarks(CLUSTER, partitions) == dict(zip(partitions, [3, 5], strict=True))


async def test_deletion_follows_a_moved_leader_in_the_same_call(
    emulator: Any, gateway: KafkaClusters
) -> None:
    emulator.create_topic("events", 2, 3)
    await produce(emulator, "events", {0: 6, 1: 6})
    await wait_followers_learned(emulator, "events", {0: 6, 1: 6})
    assert await gateway.topic_partitions(CLUSTER, ["events"]) == {"events": 2}  # leaders remembered
    old = leader_of(emulator, "events", 0)
    new = next(b for b in sorted(emulator.brokers) if b != old)
    emulator.move_leader("events", 0, new)

    outcomes = await delete_records(
        gateway, CLUSTER, {TP("events", 0): 4, TP("events", 1): 4}, leader_only=True, timeout_ms=5_000
    )

    assert {tp: o.error for tp, o in outcomes.items()} == {TP("events", 0): "NONE", TP("events", 1): "NONE"}
    assert outcomes[TP("events", 0)].leader_log_start_offset == 4
    assert log_start_offsets(emulator, "events", 0)[new] == 4


async def test_deletion_routes_around_a_stopped_leader(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("events", 1, 3)
    await produce(emulator, "events", {0: 5})
    await wait_followers_learned(emulator, "events", {0: 5})
    assert await gateway.topic_partitions(CLUSTER, ["events"]) == {"events": 1}
    old = leader_of(emulator, "events", 0)
    await emulator.stop_broker(old)

    outcomes = await delete_records(
        gateway, CLUSTER, {TP("events", 0): 2}, leader_only=True, timeout_ms=5_000
    )

    assert outcomes[TP("events", 0)].error == "NONE"
    assert leader_of(emulator, "events", 0) != old
