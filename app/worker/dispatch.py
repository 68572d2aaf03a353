"""Sending a claimed batch: one gateway call per (cluster, LeaderOnly, TimeoutMs) group, authorization
checked again right before it, the batch's leases kept while it is out, and what is said about each group.

The gateway turns each call into one DeleteRecords request per leader broker carrying all of that
leader's partitions, leaders in parallel, and hands on each leader's outcomes as it answers. Only the
stored ``resolved_offset`` is ever sent: replaying a concrete offset is a no-op on the broker, so a
crash between send and write-back is harmless.

Authorization is checked again right before sending: a binding revoked after a deletion was accepted
stops it. Once per claimed group and deletion, the requester's principals (user and the groups it held
when the API accepted it) must still have DELETE on each topic (partitions whose leader already truncated
are only being confirmed and are not checked again); the partitions of topics that lost it are not sent
and fail with ``AUTHORIZATION_REVOKED`` (the failure is audited with the other partition failures).
If the bindings cannot be read, nothing of the group is sent (the rows are claimed again later).

A sent batch's leases are renewed every third of the lease while its rows wait for an answer or a
write, so no other instance claims them meanwhile.

Each group's report: a log line per deletion (its id, request id and cluster in the context fields), a
WARNING per deletion and Kafka error for the partitions that failed or will be retried, and the outcome
counters by Kafka error name.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter, defaultdict
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from operator import attrgetter
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories import acls as acl_repo
from app.adapters.db.repositories import claims as repo
from app.adapters.db.repositories.acls import Requester
from app.adapters.db.repositories.write_back import PartitionUpdate
from app.adapters.db.session import read_session, write_transaction
from app.domain.deletion_requests import PartitionStatus
from app.domain.ports import Claim, KafkaGateway, PartitionOutcome, TopicPartition
from app.logs import log_context
from app.worker import metrics
from app.worker.retries import Policy, broker_wait_ms

log = logging.getLogger("kafka_purge.worker")

# A failure of the call as a whole (cluster unreachable, unknown cluster): every partition retries.
UNREACHABLE = "NETWORK_EXCEPTION"
AUTHORIZATION_REVOKED = "AUTHORIZATION_REVOKED"
# Partitions named in one warning line; the rest are counted.
LISTED = 10
SUCCESS = "NONE"

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


class Reauthorizer(Protocol):
    async def revoked_topics(
        self, cluster: str, principals: Sequence[str], client_host: str, topics: Sequence[str]
    ) -> dict[str, str]:
        """The topics among ``topics`` the principals may no longer DELETE on, with the reason."""
        ...


async def withhold_revoked(
    reauthorizer: Reauthorizer,
    sessionmaker: async_sessionmaker[AsyncSession],
    group: SendGroup,
    known: Mapping[str, Requester],
) -> tuple[SendGroup, dict[int, PartitionOutcome]]:
    """The group without the partitions whose requester lost DELETE, and those partitions' outcomes.
    ``known``: requesters by deletion id already at hand (a deletion's requester never changes); the
    others are read."""
    by_deletion: dict[str, list[Claim]] = defaultdict(list)
    for claim in group.claims:
        # A leader that already truncated only gets the same offset again to confirm: nothing new is asked.
        if claim.status is not PartitionStatus.LEADER_TRUNCATED:
            by_deletion[claim.deletion_id].append(claim)
    if not by_deletion:
        return group, {}
    requesters = {d: known[d] for d in by_deletion if d in known}
    if unknown := sorted(by_deletion.keys() - requesters.keys()):
        async with read_session(sessionmaker) as session:
            requesters |= await acl_repo.requesters(session, unknown)
    withheld: dict[int, PartitionOutcome] = {}
    for deletion_id, claims in by_deletion.items():
        requester = requesters.get(deletion_id)
        if requester is None:  # the deletion row is gone: nothing may be sent on its behalf
            revoked = {claim.topic: "the deletion no longer exists" for claim in claims}
        else:
            revoked = await reauthorizer.revoked_topics(
                group.cluster, requester.names, requester.client_host, sorted({c.topic for c in claims})
            )
        for claim in claims:
            if claim.topic in revoked:
                withheld[claim.id] = PartitionOutcome(
                    AUTHORIZATION_REVOKED,
                    message=f"{requester.principal if requester else 'the requester'} may no longer DELETE "
                    f"on topic {claim.topic}: {revoked[claim.topic]}; nothing was sent",
                )
    kept = tuple(claim for claim in group.claims if claim.id not in withheld)
    return replace(group, claims=kept), withheld


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
        async with contextlib.aclosing(answers):
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


@contextlib.asynccontextmanager
async def leases_kept(
    sessionmaker: async_sessionmaker[AsyncSession],
    owner: str,
    lease_seconds: float,
    leased: Callable[[], Sequence[Claim]],
) -> AsyncIterator[None]:
    """Renew the leases of ``leased()`` (the rows still held) until the block ends."""
    renewer = asyncio.create_task(_renew(sessionmaker, owner, lease_seconds, leased))
    try:
        yield
    finally:
        renewer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewer


async def _renew(
    sessionmaker: async_sessionmaker[AsyncSession],
    owner: str,
    lease_seconds: float,
    leased: Callable[[], Sequence[Claim]],
) -> None:
    while True:
        await asyncio.sleep(lease_seconds / 3)
        if not (claims := leased()):
            continue
        try:
            async with write_transaction(sessionmaker) as session:
                held = await repo.renew_leases(
                    session, owner=owner, claims=claims, now=datetime.now(UTC), lease_seconds=lease_seconds
                )
        except Exception:  # keep renewing: a lost lease only costs a harmless resend
            log.exception("renewing %d leases failed", len(claims))
            continue
        if held < len(claims):
            metrics.LOST_LEASES.inc(len(claims) - held)
            log.warning("lost %d of %d leases to another claim", len(claims) - held, len(claims))


@dataclass
class _Deletion:
    request_id: str
    statuses: Counter[str] = field(default_factory=Counter)
    # (Kafka error name, state it leaves the partition in) -> "topic-partition" names
    errors: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))


@dataclass
class GroupReport:
    """Collects a group's decided updates as the leaders answer; ``log`` writes them out."""

    cluster: str
    deletions: dict[str, _Deletion] = field(default_factory=dict)
    answers: Counter[str] = field(default_factory=Counter)

    def add(self, claim: Claim, update: PartitionUpdate) -> None:
        deletion = self.deletions.get(claim.deletion_id)
        if deletion is None:
            deletion = self.deletions[claim.deletion_id] = _Deletion(claim.request_id)
        deletion.statuses[update.status.value] += 1
        error = update.error_code or SUCCESS
        self.answers[error] += 1
        if error != SUCCESS:
            deletion.errors[error, update.status.value].append(f"{claim.topic}-{claim.partition}")

    def log(self, seconds: float) -> None:
        for error, count in self.answers.items():
            metrics.BROKER_ANSWERS.labels(self.cluster, error).inc(count)
        for deletion_id, deletion in self.deletions.items():
            # The deletion's own request id (a batch mixes requests); its principal is on the API's line.
            ids = {"deletion_id": deletion_id, "request_id": deletion.request_id}
            with log_context(**ids, cluster=self.cluster, principal=None):
                log.info(
                    "deletion %s: DeleteRecords answered for %d partition(s): %s",
                    deletion_id,
                    deletion.statuses.total(),
                    dict(deletion.statuses),
                    extra={"outcomes": dict(deletion.statuses), "seconds": round(seconds, 3)},
                )
                for (error, status), partitions in sorted(deletion.errors.items()):
                    _warn(deletion_id, error, status, partitions)


def _warn(deletion_id: str, error: str, status: str, partitions: list[str]) -> None:
    ended = (PartitionStatus.FAILED.value, PartitionStatus.SUCCEEDED.value)
    then = status if status in ended else f"{status}, retried"
    listed = ", ".join(partitions[:LISTED])
    more = f" and {len(partitions) - LISTED} more" if len(partitions) > LISTED else ""
    log.warning(
        "deletion %s: %s on %d partition(s) (%s): %s%s",
        deletion_id,
        error,
        len(partitions),
        then,
        listed,
        more,
        extra={"kafka_error": error, "status": status, "partitions": len(partitions)},
    )
