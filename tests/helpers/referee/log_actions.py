"""Scenario steps on partition logs: Produce (aiokafka), DeleteRecords (raw, confluent-kafka's and
aiokafka's Admin clients), ListOffsets (raw and confluent-kafka), Fetch (raw) and a consumer's first
record (aiokafka). Each returns what a client observes, with Kafka's error names."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError
from confluent_kafka import KafkaException
from confluent_kafka import TopicPartition as ConfluentPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from helpers.referee.session import ConnectionClosed, Session, error_name

SPECS = {"latest": -1, "earliest": -2, "max_timestamp": -3, "earliest_local": -4}
Observed = dict[str, Any]


async def produce(s: Session, partition: int = 0, count: int = 10, first_ts: int = 1_000) -> Observed:
    """``count`` records with timestamps first_ts, first_ts+1, ... (after ``base_ts``) in one batch,
    acks=all."""
    producer = AIOKafkaProducer(**s.target.aiokafka_config(), acks="all", linger_ms=0)
    await producer.start()
    try:
        batch = producer.create_batch()
        for index in range(count):
            batch.append(key=None, value=b"value-%d" % index, timestamp=s.base_ts + first_ts + index)
        sent = await (await producer.send_batch(batch, s.topic, partition=partition))
        return {"offset": sent.offset}
    except KafkaError as exc:
        return {"error": type(exc).__name__}
    finally:
        await producer.stop()


async def _route(s: Session, partitions: list[int], to: str, topic: str) -> dict[int | None, list[int]]:
    routes: dict[int | None, list[int]] = defaultdict(list)
    for partition in partitions:
        if to == "leader":
            routes[await s.leader(partition, topic)].append(partition)
        elif to == "follower":
            routes[await s.follower(partition, topic)].append(partition)
        else:
            routes[None].append(partition)
    return routes


async def delete_records(
    s: Session,
    offsets: dict[int, int],
    version: int = 2,
    timeout_ms: int = 30_000,
    to: str = "leader",
    user: str = "admin",
    topic: str | None = None,
) -> Observed:
    """Raw DeleteRecords, one request per broker; ``to`` picks the partitions' leader, a follower, or
    the bootstrap broker (``any``: for partitions that do not exist)."""
    name = topic or s.topic
    observed: Observed = {}
    for broker, partitions in (await _route(s, list(offsets), to, name)).items():
        body = {
            "Topics": [
                {
                    "Name": name,
                    "Partitions": [{"PartitionIndex": p, "Offset": offsets[p]} for p in partitions],
                }
            ],
            "TimeoutMs": timeout_ms,
        }
        try:
            answer = await s.request("DeleteRecords", version, body, broker, user)
        except ConnectionClosed:
            return {"closed": True}
        for entry in answer["Topics"][0]["Partitions"]:
            observed[str(entry["PartitionIndex"])] = {
                "error": error_name(entry["ErrorCode"]),
                "low_watermark": entry["LowWatermark"],
            }
    return observed


async def admin_delete_records(s: Session, offsets: dict[int, int]) -> Observed:
    """confluent-kafka's ``AdminClient.delete_records``: each partition's low watermark or error."""

    def call() -> Observed:
        admin = AdminClient(s.target.confluent_config())
        asked = [ConfluentPartition(s.topic, p, offset) for p, offset in offsets.items()]
        observed: Observed = {}
        for partition, future in admin.delete_records(asked, request_timeout=30).items():
            try:
                observed[str(partition.partition)] = future.result(timeout=60).low_watermark
            except KafkaException as exc:
                observed[str(partition.partition)] = exc.args[0].name()
        return observed

    return await asyncio.to_thread(call)


async def aiokafka_delete_records(s: Session, offsets: dict[int, int]) -> Observed:
    """aiokafka's ``AIOKafkaAdminClient.delete_records``: the low watermarks, or the error it raises."""
    admin = AIOKafkaAdminClient(**s.target.aiokafka_config())
    await admin.start()
    try:
        asked = {TopicPartition(s.topic, p): offset for p, offset in offsets.items()}
        answer = await admin.delete_records(asked, timeout_ms=30_000)
        return {str(tp.partition): meta.low_watermark for tp, meta in answer.items()}
    except KafkaError as exc:
        return {"error": type(exc).__name__}
    finally:
        await admin.close()


def _spec(s: Session, value: str | int) -> int:
    return SPECS[value] if isinstance(value, str) else s.base_ts + value


async def list_offsets(
    s: Session,
    specs: dict[int, str | int],
    version: int = 8,
    to: str = "leader",
    isolation: int = 0,
    leader_epoch: int = -1,
) -> Observed:
    """Raw ListOffsets: each partition's error, offset, timestamp and leader epoch."""
    observed: Observed = {}
    for broker, partitions in (await _route(s, list(specs), to, s.topic)).items():
        body = {
            "ReplicaId": -1,
            "IsolationLevel": isolation,
            "Topics": [
                {
                    "Name": s.topic,
                    "Partitions": [
                        {
                            "PartitionIndex": p,
                            "CurrentLeaderEpoch": leader_epoch,
                            "Timestamp": _spec(s, specs[p]),
                        }
                        for p in partitions
                    ],
                }
            ],
        }
        try:
            answer = await s.request("ListOffsets", version, body, broker)
        except ConnectionClosed:
            return {"closed": True}
        for entry in answer["Topics"][0]["Partitions"]:
            observed[str(entry["PartitionIndex"])] = {
                "error": error_name(entry["ErrorCode"]),
                "offset": entry["Offset"],
                "timestamp": s.relative(entry["Timestamp"]),
                "leader_epoch": entry["LeaderEpoch"],
            }
    return observed


async def admin_list_offsets(s: Session, specs: dict[int, str]) -> Observed:
    """confluent-kafka's ``AdminClient.list_offsets`` (earliest, latest, max_timestamp)."""
    kinds = {"earliest": OffsetSpec.earliest, "latest": OffsetSpec.latest}
    kinds["max_timestamp"] = OffsetSpec.max_timestamp

    def call() -> Observed:
        admin = AdminClient(s.target.confluent_config())
        asked = {ConfluentPartition(s.topic, p): kinds[spec]() for p, spec in specs.items()}
        observed: Observed = {}
        for partition, future in admin.list_offsets(asked, request_timeout=30).items():
            try:
                info = future.result(timeout=60)
                found = {"offset": info.offset, "timestamp": s.relative(info.timestamp)}
                observed[str(partition.partition)] = found
            except KafkaException as exc:
                observed[str(partition.partition)] = exc.args[0].name()
        return observed

    return await asyncio.to_thread(call)


async def fetch(
    s: Session, partition: int, offset: int, version: int = 12, to: str = "leader", leader_epoch: int = -1
) -> Observed:
    """Raw Fetch without waiting: the partition's error, high watermark, log start offset, last stable
    offset, and whether records came back."""
    broker = (await _route(s, [partition], to, s.topic)).popitem()[0]
    wanted = {
        "Partition": partition,
        "CurrentLeaderEpoch": leader_epoch,
        "FetchOffset": offset,
        "LastFetchedEpoch": -1,
        "LogStartOffset": -1,
        "PartitionMaxBytes": 1 << 20,
    }
    body = {
        "ReplicaId": -1,
        "MaxWaitMs": 0,
        "MinBytes": 0,
        "MaxBytes": 1 << 20,
        "IsolationLevel": 0,
        "SessionId": 0,
        "SessionEpoch": -1,
        "Topics": [{"Topic": s.topic, "Partitions": [wanted]}],
        "ForgottenTopicsData": [],
        "RackId": "",
    }
    try:
        answer = await s.request("Fetch", version, body, broker)
    except ConnectionClosed:
        return {"closed": True}
    entry = answer["Responses"][0]["Partitions"][0]
    return {
        "error": error_name(entry["ErrorCode"]),
        "high_watermark": entry["HighWatermark"],
        "log_start_offset": entry["LogStartOffset"],
        "last_stable_offset": entry["LastStableOffset"],
        "records": bool(entry["Records"]),
    }


async def consume_first(s: Session, partition: int = 0) -> Observed:
    """aiokafka's consumer from the earliest offset: the first record's offset and timestamp."""
    consumer = AIOKafkaConsumer(**s.target.aiokafka_config(), enable_auto_commit=False)
    await consumer.start()
    try:
        tp = TopicPartition(s.topic, partition)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        record = await asyncio.wait_for(consumer.getone(tp), 30)
        return {"offset": record.offset, "timestamp": s.relative(record.timestamp)}
    finally:
        await consumer.stop()


async def delete_mixed(s: Session, timeout_ms: int = 100) -> Observed:
    """One DeleteRecords to one leader for two of its partitions: one already at its offset (answered
    at once), one whose followers must first learn the new log start offset (waits for their fetch)."""
    leaders = {p: int(entry["LeaderId"]) for p, entry in (await s.partitions()).items()}
    satisfied, waiting = next((a, b) for a in leaders for b in leaders if a < b and leaders[a] == leaders[b])
    await produce(s, waiting, 10)
    body = {
        "Topics": [
            {
                "Name": s.topic,
                "Partitions": [
                    {"PartitionIndex": satisfied, "Offset": 0},
                    {"PartitionIndex": waiting, "Offset": 5},
                ],
            }
        ],
        "TimeoutMs": timeout_ms,
    }
    answer = await s.request("DeleteRecords", 2, body, leaders[waiting])
    found = {p["PartitionIndex"]: p for p in answer["Topics"][0]["Partitions"]}
    return {
        role: {"error": error_name(found[p]["ErrorCode"]), "low_watermark": found[p]["LowWatermark"]}
        for role, p in (("satisfied", satisfied), ("waiting", waiting))
    }
