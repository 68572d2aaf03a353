"""What a partition's DeleteRecords outcome means for its row: the executor's rules, without I/O.

- ``LowWatermark >= offset`` (every alive replica truncated): succeeded, whatever the error code. An
  error beside it (a REQUEST_TIMED_OUT whose low watermark covers the offset) is kept on the row: the
  records are gone, and the row still says what the broker answered.
- NONE with ``leader_only`` and ``LeaderLogStartOffset >= offset``: succeeded, as the LeaderOnly KIP defines.
- NONE below the offset, or the broker's REQUEST_TIMED_OUT: leader_truncated. The broker only parks a
  DeleteRecords in its purgatory (and so only times out) after the leader raised its log start offset
  (kafka-semantics.md §1.2 steps 4-6); on v3 ``LeaderLogStartOffset`` says so explicitly. The executor
  then keeps re-sending the same concrete offset (idempotent) until the low watermark reaches it.
- Other retriable errors: try again after a capped, jittered exponential backoff.
- Terminal errors: failed, with Kafka's error name and a sentence a person understands.
Whatever is not settled by the deadline fails with the last error.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.adapters.db.repositories.write_back import PartitionUpdate
from app.adapters.kafka.error_codes import classify, describe
from app.domain.deletion_requests import PartitionStatus
from app.domain.ports import Claim, PartitionOutcome
from app.settings import WorkerSettings

REQUEST_TIMED_OUT = "REQUEST_TIMED_OUT"
# The broker never waits less than this for replicas on a first send or a retry.
MIN_BROKER_WAIT_MS = 100


@dataclass(frozen=True)
class Policy:
    """Timing knobs, from ``WorkerSettings`` plus the cluster's client request timeout."""

    backoff_initial_ms: int
    backoff_max_ms: int
    confirm_interval_ms: int
    request_timeout_ms: int

    @classmethod
    def from_settings(cls, worker: WorkerSettings, request_timeout_ms: int) -> Policy:
        return cls(
            worker.backoff_initial_ms, worker.backoff_max_ms, worker.confirm_interval_ms, request_timeout_ms
        )


def broker_wait_ms(claim: Claim, now: datetime, policy: Policy) -> int:
    """The ``TimeoutMs`` to send: how long the leader may wait for its followers.

    A confirmation (the leader already truncated) waits briefly: it answers at once when the replicas
    caught up. A first send or retry waits at most half the time left, so that slow followers surface as
    leader_truncated while there is still time to confirm, and stays below the client's request timeout.
    """
    remaining = max(0, int((claim.deadline_at - now).total_seconds() * 1000))
    if claim.status is PartitionStatus.LEADER_TRUNCATED:
        return max(1, min(policy.confirm_interval_ms, remaining))
    ceiling = min(claim.timeout_ms, policy.request_timeout_ms * 3 // 4)
    return max(1, min(ceiling, max(MIN_BROKER_WAIT_MS, remaining // 2)))


def backoff_ms(attempts: int, initial_ms: int, max_ms: int, rng: random.Random) -> float:
    """Capped exponential backoff with jitter in the upper half (never a zero wait)."""
    ceiling: int = min(max_ms, initial_ms * 2 ** min(max(attempts - 1, 0), 30))
    return ceiling / 2 + rng.random() * ceiling / 2


def decide(
    claim: Claim, outcome: PartitionOutcome, now: datetime, policy: Policy, rng: random.Random
) -> PartitionUpdate:
    """The row's next state after ``outcome`` (observed at ``now``)."""
    offset = claim.resolved_offset
    lw, llso = outcome.low_watermark, outcome.leader_log_start_offset
    if lw >= offset or (outcome.ok and claim.leader_only and llso >= offset):
        return _succeeded(claim, outcome, now)
    if outcome.ok or _broker_timed_out_after_truncating(outcome, offset):
        return _leader_truncated(claim, outcome, now, policy)
    if not classify(outcome.error).retriable:
        return _failed(claim, outcome, now, outcome.error, _message(outcome))
    if now >= claim.deadline_at:
        return _failed(claim, outcome, now, outcome.error, f"Deadline passed. {_message(outcome)}")
    delay = backoff_ms(claim.attempts, policy.backoff_initial_ms, policy.backoff_max_ms, rng)
    # A partition the leader already truncated keeps saying so while it is retried.
    status = claim.status if claim.status is PartitionStatus.LEADER_TRUNCATED else PartitionStatus.IN_PROGRESS
    return _update(
        claim, status, outcome, _next(now, delay, claim), error=outcome.error, message=_message(outcome)
    )


def _broker_timed_out_after_truncating(outcome: PartitionOutcome, offset: int) -> bool:
    """A broker's REQUEST_TIMED_OUT (from its purgatory) carries the low watermark it computed when the
    leader truncated (v2) or the leader's log start offset (v3). A client-side timeout carries neither
    (both -1): then nothing is known and the partition is simply retried."""
    if outcome.error != REQUEST_TIMED_OUT:
        return False
    lw, llso = outcome.low_watermark, outcome.leader_log_start_offset
    return llso >= offset if llso >= 0 else lw >= 0


def _leader_truncated(
    claim: Claim, outcome: PartitionOutcome, now: datetime, policy: Policy
) -> PartitionUpdate:
    if now >= claim.deadline_at:
        message = (
            f"The leader truncated the log to offset {claim.resolved_offset}, but the followers did not "
            f"confirm before the deadline (low watermark {_offset(outcome.low_watermark)})."
        )
        return _failed(claim, outcome, now, REQUEST_TIMED_OUT, message)
    delay = min(
        max(policy.confirm_interval_ms, policy.backoff_max_ms),
        policy.confirm_interval_ms * 2 ** min(max(claim.attempts - 2, 0), 10),
    )
    message = "The leader truncated the log; waiting for the followers to confirm."
    return _update(
        claim,
        PartitionStatus.LEADER_TRUNCATED,
        outcome,
        _next(now, delay, claim),
        error=None,
        message=message,
    )


def _succeeded(claim: Claim, outcome: PartitionOutcome, now: datetime) -> PartitionUpdate:
    if outcome.ok:
        return _update(claim, PartitionStatus.SUCCEEDED, outcome, now, error=None, message=None)
    message = (
        f"The broker answered {outcome.error}, but its low watermark {outcome.low_watermark} already "
        f"covers offset {claim.resolved_offset}: the records are deleted on every alive replica."
    )
    return _update(claim, PartitionStatus.SUCCEEDED, outcome, now, error=outcome.error, message=message)


def _failed(
    claim: Claim, outcome: PartitionOutcome, now: datetime, error: str, message: str
) -> PartitionUpdate:
    return _update(claim, PartitionStatus.FAILED, outcome, now, error=error, message=message)


def _message(outcome: PartitionOutcome) -> str:
    text = describe(outcome.error)
    return f"{text} ({outcome.message})" if outcome.message else text


def _offset(value: int) -> str:
    return "unknown" if value < 0 else str(value)


def _next(now: datetime, delay_ms: float, claim: Claim) -> datetime:
    """Never later than the deadline: the last attempt happens at the deadline itself."""
    return min(now + timedelta(milliseconds=delay_ms), max(now, claim.deadline_at))


def _update(
    claim: Claim,
    status: PartitionStatus,
    outcome: PartitionOutcome,
    next_attempt_at: datetime,
    *,
    error: str | None,
    message: str | None,
) -> PartitionUpdate:
    lw, llso = outcome.low_watermark, outcome.leader_log_start_offset
    return PartitionUpdate(
        claim.id,
        claim.fence,
        status,
        lw if lw >= 0 else None,
        llso if llso >= 0 else None,
        error,
        message,
        next_attempt_at,
    )
