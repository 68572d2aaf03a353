"""DeleteRecords on the leaders a metadata answer names: one request per leader carrying all of that
leader's partitions, leaders in parallel, every partition's result read from its leader's response.

Each leader's outcomes are handed on as its answer arrives, so the caller can record them while the
other leaders are still working. A leader that fails affects only its own partitions: each gets an
outcome, nothing is raised. The partitions whose outcome says the leader may have moved (a partition
the metadata cannot route, or an error of Kafka's InvalidMetadataException family such as
``NOT_LEADER_OR_FOLLOWER``) are also named as ``moved``: routed with remembered metadata, they are worth
one more try on fresh metadata. Nothing was deleted for them, and a resent concrete offset is harmless
anyway.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Mapping, Sequence

from app.adapters.kafka.client import BrokerFailure, ClusterClient
from app.adapters.kafka.errors import ERROR_NAMES, Retry, classify, error_name
from app.adapters.kafka.metadata import Metadata, route
from app.adapters.kafka.protocol import DeleteRecordsRequest, VersionUnsupported
from app.adapters.kafka.responses import DeleteRecordsAnswer, read_response
from app.domain.ports import PartitionOutcome, TopicPartition

log = logging.getLogger(__name__)

_MOVED = Retry(refresh_metadata=True)


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
                error_name(code),
                None if code in ERROR_NAMES else f"broker error code {code}",
            )
        outcomes[tp] = PartitionOutcome(error[0], low_watermark, leader_log_start_offset, error[1])
    return outcomes
