"""ListOffsets on the leaders a metadata answer names, and what a leader's high watermark says about an
``OFFSET_OUT_OF_RANGE`` from DeleteRecords.

One ListOffsets request per leader carrying all of that leader's partitions, leaders in parallel; a
partition that cannot be routed or read gets its outcome, nothing is raised.

A new leader's high watermark can trail the old leader's for a moment after a leader change: it answers
ListOffsets LATEST with ``OFFSET_NOT_AVAILABLE`` (v5+; ``LEADER_NOT_AVAILABLE`` before) until its HW
reaches the offset its epoch began at, and a DeleteRecords for an offset resolved from the old leader's
HW gets ``OFFSET_OUT_OF_RANGE`` meanwhile (Partition.scala ``deleteRecordsOnLeader``). Such an answer is
retriable; one from a leader whose HW is known and below the offset stays terminal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from app.adapters.kafka.client import BrokerFailure, ClusterClient
from app.adapters.kafka.deleting import outcomes_of
from app.adapters.kafka.metadata import (
    READ_UNCOMMITTED,
    Metadata,
    list_offsets_request,
    read_list_offsets,
    route,
)
from app.adapters.kafka.protocol import VersionUnsupported
from app.domain.ports import PartitionOutcome, TopicPartition

OFFSET_OUT_OF_RANGE = "OFFSET_OUT_OF_RANGE"
# ListOffsets' answers of a new leader whose high watermark has not reached its epoch's start (v5+, older).
_LAGGING = frozenset({"OFFSET_NOT_AVAILABLE", "LEADER_NOT_AVAILABLE"})

Offsets = dict[TopicPartition, int]
Refusals = dict[TopicPartition, PartitionOutcome]


async def offsets_on_leaders(
    client: ClusterClient,
    metadata: Metadata,
    partitions: Sequence[TopicPartition],
    timestamp: int,
    isolation: int = READ_UNCOMMITTED,
) -> tuple[Offsets, Refusals]:
    """The offsets read, and the partitions that could not be read with their outcome."""
    by_leader, failed = route(metadata, partitions)
    answers = await asyncio.gather(
        *(_list_on_leader(client, leader, tps, timestamp, isolation) for leader, tps in by_leader.items())
    )
    offsets: Offsets = {}
    for answer in answers:
        for tp, outcome in answer.items():
            if outcome.ok:
                offsets[tp] = outcome.low_watermark
            else:
                failed[tp] = outcome
    return offsets, failed


async def _list_on_leader(
    client: ClusterClient, leader: int, partitions: list[TopicPartition], timestamp: int, isolation: int
) -> Refusals:
    """ListOffsets on one leader; the offset travels in ``low_watermark`` of the outcome."""
    try:
        response = await client.send(
            leader, list_offsets_request(partitions, timestamp, isolation), timeout_s=client.timeout_s
        )
    except BrokerFailure as exc:
        return outcomes_of(partitions, exc.error, exc.message)
    except VersionUnsupported as exc:
        return outcomes_of(partitions, "UNSUPPORTED_VERSION", str(exc))
    answered = read_list_offsets(response)
    results: Refusals = {}
    for tp in partitions:
        error, offset = answered.get(tp, ("UNKNOWN_SERVER_ERROR", -1))
        results[tp] = PartitionOutcome(error=error, low_watermark=offset)
    return results


def out_of_range(answer: Mapping[TopicPartition, PartitionOutcome]) -> list[TopicPartition]:
    """The partitions a DeleteRecords answer refused with ``OFFSET_OUT_OF_RANGE``."""
    return [tp for tp, outcome in answer.items() if outcome.error == OFFSET_OUT_OF_RANGE]


def judge_out_of_range(
    answer: Mapping[TopicPartition, PartitionOutcome],
    offsets: Mapping[TopicPartition, int],
    ends: Offsets,
    refusals: Refusals,
) -> dict[TopicPartition, PartitionOutcome]:
    """``answer`` with each ``OFFSET_OUT_OF_RANGE`` turned retriable (``OFFSET_NOT_AVAILABLE``) when the
    leader's fresh high watermark (``ends``, or a lagging leader's refusal in ``refusals``) shows it lags
    or has caught up to the offset since."""
    judged = dict(answer)
    for tp in out_of_range(answer):
        end, refusal = ends.get(tp), refusals.get(tp)
        if (end is not None and end >= offsets[tp]) or (refusal and refusal.error in _LAGGING):
            state = "caught up since" if end is not None else "catching up"
            judged[tp] = PartitionOutcome(
                "OFFSET_NOT_AVAILABLE",
                message=f"DeleteRecords answered OFFSET_OUT_OF_RANGE for offset {offsets[tp]}, but the "
                f"leader's high watermark lags ({state})",
            )
    return judged
