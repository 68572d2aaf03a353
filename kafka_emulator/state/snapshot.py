"""JSON-able view of the cluster model (served by the control API's GET /state)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kafka_emulator.state.partition import Partition

if TYPE_CHECKING:
    from kafka_emulator.state.cluster_state import ClusterState


def snapshot_state(state: ClusterState) -> dict[str, Any]:
    """Shape: {"brokers": [{id, alive, crashed, host, port, max_delete_records_version}], "topics": {name: {
    topic_id, internal, configs, partitions: [{partition, leader, leader_epoch, replicas, isr,
    low_watermark, replica_states: {"<broker>": {log_start_offset, log_end_offset, high_watermark,
    paused, alive}}}]}}}."""
    brokers = []
    for broker in state.broker_ids:
        host, port = state.listeners.get(broker, ("", 0))
        brokers.append(
            {
                "id": broker,
                "alive": broker in state.alive,
                "crashed": broker in state.crashed,
                "host": host,
                "port": port,
                "max_delete_records_version": state.max_delete_records_version.get(broker, 2),
            }
        )
    topics = {
        name: {
            "topic_id": str(uuid.UUID(bytes=topic.topic_id)),
            "internal": topic.internal,
            "configs": dict(topic.configs),
            "partitions": [_partition(p) for p in topic.partitions],
        }
        for name, topic in state.topics.items()
    }
    return {"brokers": brokers, "topics": topics}


def _partition(partition: Partition) -> dict[str, Any]:
    leader_alive = partition.leader in partition.alive
    return {
        "partition": partition.index,
        "leader": partition.leader if leader_alive else -1,
        "leader_epoch": partition.leader_epoch,
        "replicas": list(partition.replicas),
        "isr": partition.isr(),
        "low_watermark": partition.low_watermark() if leader_alive else -1,
        "replica_states": {
            str(broker): {
                "log_start_offset": log.log_start_offset,
                "log_end_offset": log.log_end_offset,
                "high_watermark": log.high_watermark,
                "paused": broker in partition.paused,
                "alive": broker in partition.alive,
            }
            for broker, log in partition.logs.items()
        },
    }
