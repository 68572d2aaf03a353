"""The newest request versions, sent raw with the emulator's codec: Metadata v12 topic ids, Produce v11,
Fetch v16 by topic id (with unknown ids and leader epochs), ListOffsets v10."""

from __future__ import annotations

import struct

from helpers.emulator.dataplane_clients import until
from helpers.emulator.factories import RawFactory
from helpers.emulator.record_batches import batch

from kafka_emulator import EmulatedCluster
from kafka_emulator.protocol.errors import ErrorCode

UNKNOWN_TOPIC_ID = 100


async def test_produce_fetch_and_list_offsets_at_the_latest_versions(
    cluster: EmulatedCluster, raw: RawFactory
) -> None:
    cluster.create_topic("t", 1, 3)
    first = cluster.model.leader_of("t", 0)
    leader = next(b for b in (1, 2, 3) if b != first)
    cluster.move_leader("t", 0, leader)  # leader epoch 1, so epoch 0 is fenced below
    connection = await raw(leader)
    metadata = await connection.request("Metadata", 12, {"Topics": [{"TopicId": bytes(16), "Name": "t"}]})
    topic = metadata["Topics"][0]
    topic_id, epoch = topic["TopicId"], topic["Partitions"][0]["LeaderEpoch"]
    assert topic_id != bytes(16)
    produced = await connection.request(
        "Produce",
        11,
        {
            "Acks": -1,
            "TimeoutMs": 5000,
            "TopicData": [{"Name": "t", "PartitionData": [{"Index": 0, "Records": batch(4)}]}],
        },
    )
    assert produced["Responses"][0]["PartitionResponses"][0]["ErrorCode"] == 0
    await until(
        lambda: (
            cluster.state()["topics"]["t"]["partitions"][0]["replica_states"][str(leader)]["high_watermark"]
            == 4
        )
    )

    def fetch_request(topic_ref: bytes, leader_epoch: int) -> dict[str, object]:
        partition = {
            "Partition": 0,
            "CurrentLeaderEpoch": leader_epoch,
            "FetchOffset": 0,
            "PartitionMaxBytes": 1 << 20,
        }
        return {"MaxWaitMs": 0, "MinBytes": 1, "Topics": [{"TopicId": topic_ref, "Partitions": [partition]}]}

    fetched = await connection.request("Fetch", 16, fetch_request(topic_id, epoch))
    fenced = await connection.request("Fetch", 16, fetch_request(topic_id, epoch - 1))
    assert fenced["Responses"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.FENCED_LEADER_EPOCH
    answer = fetched["Responses"][0]
    assert answer["TopicId"] == topic_id
    part = answer["Partitions"][0]
    assert (part["ErrorCode"], part["HighWatermark"], part["LogStartOffset"]) == (0, 4, 0)
    assert struct.unpack_from(">q", part["Records"], 0)[0] == 0
    unknown = await connection.request("Fetch", 16, fetch_request(b"\x01" * 16, -1))
    assert unknown["Responses"][0]["Partitions"][0]["ErrorCode"] == UNKNOWN_TOPIC_ID
    ahead = await connection.request("Fetch", 16, fetch_request(topic_id, epoch + 1))
    assert ahead["Responses"][0]["Partitions"][0]["ErrorCode"] == ErrorCode.UNKNOWN_LEADER_EPOCH

    listed = await connection.request(
        "ListOffsets",
        10,
        {
            "ReplicaId": -1,
            "IsolationLevel": 0,
            "TimeoutMs": 1000,
            "Topics": [
                {
                    "Name": "t",
                    "Partitions": [{"PartitionIndex": 0, "CurrentLeaderEpoch": epoch, "Timestamp": -3}],
                }
            ],
        },
    )
    entry = listed["Topics"][0]["Partitions"][0]
    assert (entry["ErrorCode"], entry["Offset"], entry["Timestamp"], entry["LeaderEpoch"]) == (
        0,
        3,
        1_003,
        epoch,
    )
