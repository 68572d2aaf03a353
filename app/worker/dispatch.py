"""Sending claimed partitions: one gateway call per (cluster, LeaderOnly, TimeoutMs) group.

The gateway turns each call into one DeleteRecords request per leader broker carrying all of that
leader's partitions, leaders in parallel, and hands on each leader's outcomes as it answers. Only the
stored ``resolved_offset`` is ever sent: replaying a concrete offset is a no-op on the broker, so a
crash between send and write-back is harmless.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter

from app.adapters.db.repositories.claims import Claim
from app.domain.deletion_requests import PartitionStatus
from app.domain.ports import KafkaGateway, PartitionOutcome, TopicPartition
from app.worker.retries import Policy, broker_wait_ms

log = logging.getLogger("kafka_purge.worker")

# A failure of the call as a whole (cluster unreachable, unknown cluster): every partition retries.
UNREACHABLE = "NETWORK_EXCEPTION"


# What makes claims one group when they share it.
_ONE_GROUP = attrgetter("deletion_id", "cluster", "status", "deadline_at", "timeout_ms", "leader_only")


@dataclass(frozen=True)
class SendGroup:
    cluster: str
    leader_only: bool
    timeout_ms: int
    claims: tuple[Claim, ...]


def group_claims(claims: Sequence[Claim], now: datetime, policies: dict[str, Policy]) -> list[SendGroup]:
    """Group by what one DeleteRecords request shares: cluster, LeaderOnly and TimeoutMs.

    A partition that two deletions name goes into separate calls (a request carries one offset per
    partition, and each deletion's outcome must come from its own offset)."""
    if len(set(map(_ONE_GROUP, claims))) == 1:
        # A deletion's rows in one state (its first send): one call. Its partitions are distinct (the
        # store keeps one row per deletion, topic and partition).
        first = claims[0]
        timeout_ms = broker_wait_ms(first, now, policies[first.cluster])
        return [SendGroup(first.cluster, first.leader_only, timeout_ms, tuple(claims))]
    groups: dict[tuple[tuple[str, bool, int], int], list[Claim]] = defaultdict(list)
    rounds: dict[tuple[tuple[str, bool, int], str, int], int] = {}
    # The wait depends only on these; a batch has few distinct ones (one per deletion and status).
    waits: dict[tuple[str, PartitionStatus, datetime, int], int] = {}
    for claim in claims:
        facts = (claim.cluster, claim.status, claim.deadline_at, claim.timeout_ms)
        if (wait := waits.get(facts)) is None:
            wait = waits[facts] = broker_wait_ms(claim, now, policies[claim.cluster])
        key = (claim.cluster, claim.leader_only, wait)
        seen = (key, claim.topic, claim.partition)
        round_ = rounds.get(seen, 0)
        rounds[seen] = round_ + 1
        groups[key, round_].append(claim)
    return [
        SendGroup(cluster, leader_only, timeout_ms, tuple(members))
        for ((cluster, leader_only, timeout_ms), _), members in sorted(groups.items())
    ]


async def send_group(
    gateway: KafkaGateway, group: SendGroup
) -> AsyncGenerator[dict[int, PartitionOutcome], None]:
    """The claimed rows' outcomes by row id, each leader's as it answers; every row exactly once."""
    rows: dict[TopicPartition, int] = {}
    offsets: dict[TopicPartition, int] = {}
    for claim in group.claims:
        tp = TopicPartition(claim.topic, claim.partition)
        rows[tp], offsets[tp] = claim.id, claim.resolved_offset
    try:
        if not gateway.has_cluster(group.cluster):
            raise LookupError(f"cluster {group.cluster!r} is not configured")
        answers = gateway.delete_records_as_answered(
            group.cluster, offsets, leader_only=group.leader_only, timeout_ms=group.timeout_ms
        )
        async with aclosing(answers):
            async for answer in answers:
                chunk = {rows.pop(tp): outcome for tp, outcome in answer.items() if tp in rows}
                if chunk:
                    yield chunk
    except Exception as exc:  # the call failed: nothing is known about the partitions not answered
        log.warning("delete_records on cluster %s failed: %r", group.cluster, exc)
        failed = PartitionOutcome(UNREACHABLE, message=str(exc) or type(exc).__name__)
        yield dict.fromkeys(rows.values(), failed)
        return
    if rows:
        missing = PartitionOutcome(
            UNREACHABLE, message="the broker's response did not include this partition"
        )
        yield dict.fromkeys(rows.values(), missing)
