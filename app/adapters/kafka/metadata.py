"""Typed metadata (decoded in ``metadata_codec.py``), routing partitions to their leaders, and ListOffsets."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from app.adapters.kafka.errors import error_name
from app.adapters.kafka.list_offsets import ListOffsetsRequest, read_answer
from app.domain.ports import PartitionOutcome, TopicPartition

LATEST = -1
EARLIEST = -2
_CONSUMER_REPLICA_ID = -1
READ_UNCOMMITTED, READ_COMMITTED = 0, 1  # ListOffsets' isolation levels


class PartitionMetadata(NamedTuple):
    """A tuple: built once per partition of every topic asked about, so it must be cheap."""

    leader: int
    replicas: tuple[int, ...]
    error: str


@dataclass(frozen=True)
class TopicMetadata:
    error: str
    partitions: dict[int, PartitionMetadata]


@dataclass(frozen=True)
class Metadata:
    brokers: tuple[int, ...]
    topics: dict[str, TopicMetadata]


def _failure(name: str, detail: str) -> PartitionOutcome:
    return PartitionOutcome(error=name, message=detail)


def route(
    metadata: Metadata, partitions: Iterable[TopicPartition]
) -> tuple[dict[int, list[TopicPartition]], dict[TopicPartition, PartitionOutcome]]:
    """Group partitions by leader broker id; the ones that cannot be sent get an outcome instead."""
    by_leader: dict[int, list[TopicPartition]] = defaultdict(list)
    failed: dict[TopicPartition, PartitionOutcome] = {}
    for tp in partitions:
        topic = metadata.topics.get(tp.topic)
        if topic is None:
            failed[tp] = _failure("UNKNOWN_TOPIC_OR_PARTITION", f"topic {tp.topic!r} is not in the metadata")
        elif topic.error != "NONE":
            failed[tp] = _failure(topic.error, f"metadata for topic {tp.topic!r}")
        elif (partition := topic.partitions.get(tp.partition)) is None:
            failed[tp] = _failure(
                "UNKNOWN_TOPIC_OR_PARTITION", f"topic {tp.topic!r} has {len(topic.partitions)} partitions"
            )
        elif partition.leader < 0:
            failed[tp] = _failure("LEADER_NOT_AVAILABLE", f"partition {tp} has no leader")
        else:
            by_leader[partition.leader].append(tp)
    return dict(by_leader), failed


def list_offsets_request(
    partitions: Iterable[TopicPartition], timestamp: int, isolation: int = READ_UNCOMMITTED
) -> Any:
    """ListOffsets for one broker; LATEST answers the high watermark (read_uncommitted) or the last
    stable offset (read_committed: the first offset of the oldest open transaction), EARLIEST the log
    start offset."""
    by_topic: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for tp in partitions:
        by_topic[tp.topic].append((tp.partition, timestamp))
    topics = [(name, sorted(parts)) for name, parts in sorted(by_topic.items())]
    return ListOffsetsRequest(_CONSUMER_REPLICA_ID, isolation, topics)


def read_list_offsets(response: Any) -> dict[TopicPartition, tuple[str, int]]:
    """Every partition of a ListOffsets response: (error name, offset)."""
    results: dict[TopicPartition, tuple[str, int]] = {}
    names: dict[int, str] = {}
    for topic, parts in read_answer(response).topics.items():
        for indexes, errors, offsets in parts:
            for code in set(errors) - names.keys():
                names[code] = error_name(code)
            results.update(
                (TopicPartition(topic, index), (names[code], offset))
                for index, code, offset in zip(indexes, errors, offsets, strict=True)
            )
    return results
