"""Requests to the leaders a metadata answer names: DeleteRecords and ListOffsets, one request per leader
carrying all of that leader's partitions, leaders in parallel, every partition's result read from its
leader's response. A partition that cannot be routed or whose leader fails gets its outcome; nothing is
raised.

DeleteRecords: each leader's outcomes are handed on as its answer arrives, so the caller can record them
while the other leaders are still working. The partitions whose outcome says the leader may have moved
(a partition the metadata cannot route, or an error of Kafka's InvalidMetadataException family such as
``NOT_LEADER_OR_FOLLOWER``) are also named as ``moved``: routed with remembered metadata, they are worth
one more try on fresh metadata. Nothing was deleted for them, and a resent concrete offset is harmless
anyway.

A new leader's high watermark can trail the old leader's for a moment after a leader change: it answers
ListOffsets LATEST with ``OFFSET_NOT_AVAILABLE`` (v5+; ``LEADER_NOT_AVAILABLE`` before) until its HW
reaches the offset its epoch began at, and a DeleteRecords for an offset resolved from the old leader's
HW gets ``OFFSET_OUT_OF_RANGE`` meanwhile (Partition.scala ``deleteRecordsOnLeader``). Such an answer is
retriable; one from a leader whose HW is known and below the offset stays terminal
(``judge_out_of_range``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence

from app.adapters.kafka.cluster_client import BrokerFailure, ClusterClient
from app.adapters.kafka.codecs.delete_records import DeleteRecordsAnswer, DeleteRecordsRequest, read_response
from app.adapters.kafka.codecs.list_offsets import READ_UNCOMMITTED, list_offsets_request, read_list_offsets
from app.adapters.kafka.codecs.topic_metadata import Metadata
from app.adapters.kafka.error_codes import ERROR_NAMES, Retry, VersionUnsupported, classify
from app.domain.ports import PartitionOutcome, TopicPartition

log = logging.getLogger(__name__)

_MOVED = Retry(refresh_metadata=True)
OFFSET_OUT_OF_RANGE = "OFFSET_OUT_OF_RANGE"
# ListOffsets' answers of a new leader whose high watermark has not reached its epoch's start (v5+, older).
_LAGGING = frozenset({"OFFSET_NOT_AVAILABLE", "LEADER_NOT_AVAILABLE"})

Offsets = dict[TopicPartition, int]
Refusals = dict[TopicPartition, PartitionOutcome]


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


def outcomes_of(
    partitions: Sequence[TopicPartition], error: str, detail: str
) -> dict[TopicPartition, PartitionOutcome]:
    return dict.fromkeys(partitions, PartitionOutcome(error=error, message=detail))


async def delete_on_leaders(
    client: ClusterClient,
    metadata: Metadata,
    offsets: Mapping[TopicPartition, int],
    *,
    leader_only: bool,
    timeout_ms: int,
) -> AsyncGenerator[tuple[dict[TopicPartition, PartitionOutcome], list[TopicPartition]], None]:
    """Each leader's outcomes as its answer arrives (the partitions that cannot be routed first), with the
    partitions among them whose leader may have moved (``moved``). Leaders not answered yet when the
    caller stops iterating are cancelled."""
    by_leader, unrouted = route(metadata, offsets)
    if unrouted:
        yield unrouted, list(unrouted)
    pending = {
        asyncio.ensure_future(
            _delete_on_leader(client, leader, {tp: offsets[tp] for tp in tps}, leader_only, timeout_ms)
        )
        for leader, tps in by_leader.items()
    }
    try:
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                answer = task.result()
                errors = {outcome.error for outcome in answer.values()} - {"NONE"}
                stale = {error for error in errors if classify(error) == _MOVED}
                yield (
                    answer,
                    [tp for tp, outcome in answer.items() if outcome.error in stale] if stale else [],
                )
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


async def _delete_on_leader(
    client: ClusterClient,
    leader: int,
    offsets: dict[TopicPartition, int],
    leader_only: bool,
    timeout_ms: int,
) -> dict[TopicPartition, PartitionOutcome]:
    request = DeleteRecordsRequest(offsets, timeout_ms=timeout_ms, leader_only=leader_only)
    # The broker may hold the request for TimeoutMs in its purgatory; only after that plus a normal
    # request time is the broker considered silent (never race the broker's own timeout).
    timeout_s = request.timeout_ms / 1000 + client.timeout_s
    partitions = list(offsets)
    try:
        response = await client.send(leader, request, timeout_s=timeout_s, purgatory=True)
    except BrokerFailure as exc:
        log.warning("cluster %r: DeleteRecords for %d partition(s): %s", client.name, len(partitions), exc)
        return outcomes_of(partitions, exc.error, exc.message)
    except VersionUnsupported as exc:
        log.warning("cluster %r: DeleteRecords not sent to broker %s: %s", client.name, leader, exc)
        return outcomes_of(partitions, "UNSUPPORTED_VERSION", f"broker {leader}: {exc}")
    return _outcomes_read(leader, partitions, read_response(response))


def _outcomes_read(
    leader: int, partitions: list[TopicPartition], answer: DeleteRecordsAnswer
) -> dict[TopicPartition, PartitionOutcome]:
    """Each partition's outcome from its leader's answer; one the answer lacks fails, as Kafka's Admin
    client does (never guess). 3,333 partitions per leader: one lookup and one outcome each."""
    results = answer.partitions  # keyed by (topic, partition) tuples, which TopicPartition equals
    errors: dict[int, tuple[str, str | None]] = {}
    outcomes: dict[TopicPartition, PartitionOutcome] = {}
    for tp in partitions:
        result = results.get(tp)
        if result is None:
            outcomes[tp] = PartitionOutcome(
                "UNKNOWN_SERVER_ERROR",
                message=f"The response from broker {leader} did not contain a result for partition {tp}.",
            )
            continue
        low_watermark, leader_log_start_offset, code = result
        if (error := errors.get(code)) is None:
            # Known codes need no more words than describe(name); an unknown one keeps its number.
            error = errors[code] = (
                ERROR_NAMES[code],
                None if code in ERROR_NAMES else f"broker error code {code}",
            )
        outcomes[tp] = PartitionOutcome(error[0], low_watermark, leader_log_start_offset, error[1])
    return outcomes


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
