"""Group coordinators are remembered between requests, as Kafka's clients do, and asked again when the
group's coordinator moved or went away: the committed offsets read are always the coordinator's own."""

from __future__ import annotations

from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.structs import TopicPartition as KafkaTP
from helpers.kafka_gateway import CLUSTER

from app.adapters.kafka import KafkaClusters
from app.domain.ports import TopicPartition

OFFSETS_TOPIC = "__consumer_offsets"


async def _commit(emulator: Any, group: str, topic: str, offset: int) -> None:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=emulator.bootstrap, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        consumer.assign([KafkaTP(topic, 0)])
        await consumer.commit({KafkaTP(topic, 0): offset})
    finally:
        await consumer.stop()


def _move_coordinator(emulator: Any, group: str) -> int:
    """Move the group's offsets partition to another broker; the new coordinator."""
    partition = emulator.groups.offsets_partition(group)
    current = emulator.groups.coordinator_of(group)
    target = next(b for b in sorted(emulator.brokers) if b != current)
    emulator.move_leader(OFFSETS_TOPIC, partition, target)
    return int(target)


async def test_a_moved_coordinator_is_found_again(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("orders", 1, 3)
    tp = TopicPartition("orders", 0)
    await _commit(emulator, "billing", "orders", 3)
    assert await gateway.committed_offsets(CLUSTER, ["billing"], [tp]) == {"billing": {tp: 3}}
    client = await gateway._client(CLUSTER)
    assert client.coordinators == {"billing": emulator.groups.coordinator_of("billing")}

    moved_to = _move_coordinator(emulator, "billing")
    await _commit(emulator, "billing", "orders", 5)
    assert await gateway.committed_offsets(CLUSTER, ["billing"], [tp]) == {"billing": {tp: 5}}
    assert client.coordinators == {"billing": moved_to}


async def test_a_stopped_coordinator_is_found_again(emulator: Any, gateway: KafkaClusters) -> None:
    emulator.create_topic("orders", 1, 3)
    tp = TopicPartition("orders", 0)
    await _commit(emulator, "billing", "orders", 3)
    assert await gateway.committed_offsets(CLUSTER, ["billing"], [tp]) == {"billing": {tp: 3}}
    stopped = emulator.groups.coordinator_of("billing")
    await emulator.stop_broker(stopped)
    assert await gateway.committed_offsets(CLUSTER, ["billing"], [tp]) == {"billing": {tp: 3}}
    client = await gateway._client(CLUSTER)
    assert client.coordinators["billing"] == emulator.groups.coordinator_of("billing") != stopped
