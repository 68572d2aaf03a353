"""Scenario steps on consumer groups: OffsetCommit, OffsetFetch and DescribeGroups (raw requests, sent to
the group's coordinator as clients do) and a consumer group's commit (aiokafka)."""

from __future__ import annotations

import asyncio
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition

from helpers.referee.session import Session, error_name

Observed = dict[str, Any]


async def offset_commit(
    s: Session, group: str, offsets: dict[int, int], version: int = 8, topic: str | None = None
) -> Observed:
    """Raw OffsetCommit outside a generation (as Kafka's Admin alterConsumerGroupOffsets does)."""
    body = {
        "GroupId": group,
        "GenerationIdOrMemberEpoch": -1,
        "MemberId": "",
        "GroupInstanceId": None,
        "Topics": [
            {
                "Name": topic or s.topic,
                "Partitions": [
                    {
                        "PartitionIndex": p,
                        "CommittedOffset": o,
                        "CommittedLeaderEpoch": -1,
                        "CommittedMetadata": "",
                    }
                    for p, o in offsets.items()
                ],
            }
        ],
    }
    answer = await s.coordinated(
        group,
        "OffsetCommit",
        version,
        body,
        lambda a: [p["ErrorCode"] for t in a["Topics"] for p in t["Partitions"]],
    )
    return {
        str(p["PartitionIndex"]): error_name(p["ErrorCode"])
        for t in answer["Topics"]
        for p in t["Partitions"]
    }


async def offset_fetch(
    s: Session, group: str, partitions: list[int] | None = None, version: int = 7, topic: str | None = None
) -> Observed:
    """Raw OffsetFetch (v7: one group): the group error and each partition's offset, metadata, error."""
    topics = None if partitions is None else [{"Name": topic or s.topic, "PartitionIndexes": partitions}]
    body = {"GroupId": group, "Topics": topics, "RequireStable": False}
    answer = await s.coordinated(group, "OffsetFetch", version, body, lambda a: [a.get("ErrorCode", 0)])
    return {
        "error": error_name(answer.get("ErrorCode", 0)),
        "partitions": {
            f"{(t['Name'] == s.topic and '$topic') or t['Name']}/{p['PartitionIndex']}": [
                p["CommittedOffset"],
                p["Metadata"],
                error_name(p["ErrorCode"]),
            ]
            for t in answer["Topics"]
            for p in t["Partitions"]
        },
    }


async def describe_groups(s: Session, group: str, version: int = 5) -> Observed:
    body = {"Groups": [group], "IncludeAuthorizedOperations": False}
    answer = await s.coordinated(
        group, "DescribeGroups", version, body, lambda a: [a["Groups"][0]["ErrorCode"]]
    )
    entry = answer["Groups"][0]
    return {
        "error": error_name(entry["ErrorCode"]),
        "state": entry["GroupState"],
        "protocol_type": entry["ProtocolType"],
        "protocol": entry["ProtocolData"],
        "members": len(entry["Members"]),
    }


class _Assigned(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.done = asyncio.Event()

    async def on_partitions_revoked(self, revoked: object) -> None:
        return None

    async def on_partitions_assigned(self, assigned: object) -> None:
        self.done.set()


async def consumer_commit(s: Session, group: str, partition: int, offset: int) -> Observed:
    """An aiokafka consumer joins ``group`` (subscribed to the topic), commits, and leaves."""
    consumer = AIOKafkaConsumer(**s.target.aiokafka_config(), group_id=group, enable_auto_commit=False)
    assigned = _Assigned()
    consumer.subscribe([s.topic], listener=assigned)
    await consumer.start()
    try:
        await asyncio.wait_for(assigned.done.wait(), 30)
        await consumer.commit({TopicPartition(s.topic, partition): offset})
        return {"assigned": sorted(p.partition for p in consumer.assignment())}
    finally:
        await consumer.stop()
