"""The executor's outcome rules (pure): what each DeleteRecords answer does to a partition row."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from helpers.claims import claim
from hypothesis import given
from hypothesis import strategies as st

from app.domain.deletion_requests import PartitionStatus
from app.domain.ports import Claim, PartitionOutcome
from app.worker.retries import Policy, backoff_ms, broker_wait_ms, decide

NOW = datetime(2026, 11, 22, tzinfo=UTC)
POLICY = Policy(
    backoff_initial_ms=200, backoff_max_ms=5_000, confirm_interval_ms=500, request_timeout_ms=40_000
)
CLAIM = claim(NOW, id=1, resolved_offset=100, fence=3)


def run(
    outcome: PartitionOutcome, claim: Claim = CLAIM, now: datetime = NOW
) -> tuple[str, str | None, datetime]:
    update = decide(claim, outcome, now, POLICY, random.Random(7))
    assert (update.id, update.fence) == (claim.id, claim.fence)
    return update.status.value, update.error_code, update.next_attempt_at


def test_success_needs_the_low_watermark_at_the_offset() -> None:
    assert run(PartitionOutcome("NONE", 120, 120))[:2] == ("succeeded", None)
    assert run(PartitionOutcome("NONE", 90, 100))[:2] == ("leader_truncated", None)


def test_leader_only_succeeds_on_the_leaders_log_start_offset() -> None:
    leader_only = CLAIM._replace(leader_only=True)
    assert run(PartitionOutcome("NONE", 40, 100), leader_only)[:2] == ("succeeded", None)


def test_a_brokers_timeout_means_the_leader_truncated() -> None:
    assert run(PartitionOutcome("REQUEST_TIMED_OUT", 10, 100))[0] == "leader_truncated"  # v3
    assert run(PartitionOutcome("REQUEST_TIMED_OUT", 10, -1))[0] == "leader_truncated"  # v2
    # A client-side timeout carries no offsets: nothing is known, the partition is retried.
    assert run(PartitionOutcome("REQUEST_TIMED_OUT", -1, -1))[:2] == ("in_progress", "REQUEST_TIMED_OUT")


def test_a_low_watermark_covering_the_offset_is_success_whatever_the_error() -> None:
    # The broker's purgatory timed out, but the low watermark it answered already covers offset 100.
    answer = PartitionOutcome("REQUEST_TIMED_OUT", 182, -1)
    for sent in (CLAIM, CLAIM._replace(status=PartitionStatus.LEADER_TRUNCATED, attempts=4)):
        for now in (NOW, sent.deadline_at):
            update = decide(sent, answer, now, POLICY, random.Random())
            assert (update.status, update.error_code, update.low_watermark) == (
                PartitionStatus.SUCCEEDED,
                "REQUEST_TIMED_OUT",
                182,
            )
            assert "low watermark 182 already covers offset 100" in (update.error_message or "")
    assert run(PartitionOutcome("REQUEST_TIMED_OUT", 100, 100))[:2] == ("succeeded", "REQUEST_TIMED_OUT")


def test_confirmations_fail_at_the_deadline_saying_what_happened() -> None:
    truncated = CLAIM._replace(status=PartitionStatus.LEADER_TRUNCATED, attempts=5)
    update = decide(
        truncated, PartitionOutcome("REQUEST_TIMED_OUT", 60, 100), CLAIM.deadline_at, POLICY, random.Random()
    )
    assert (update.status, update.error_code) == (PartitionStatus.FAILED, "REQUEST_TIMED_OUT")
    assert update.error_message is not None
    assert "leader truncated" in update.error_message
    assert "low watermark 60" in update.error_message
    assert (update.low_watermark, update.leader_log_start_offset) == (60, 100)


def test_retriable_errors_wait_and_keep_a_leader_truncated_status() -> None:
    status, error, next_at = run(PartitionOutcome("NOT_LEADER_OR_FOLLOWER"))
    assert (status, error) == ("in_progress", "NOT_LEADER_OR_FOLLOWER")
    assert NOW < next_at <= NOW + timedelta(milliseconds=200)
    truncated = CLAIM._replace(status=PartitionStatus.LEADER_TRUNCATED)
    assert run(PartitionOutcome("NOT_LEADER_OR_FOLLOWER"), truncated)[0] == "leader_truncated"


def test_terminal_errors_fail_with_a_readable_message() -> None:
    update = decide(CLAIM, PartitionOutcome("POLICY_VIOLATION"), NOW, POLICY, random.Random())
    assert (update.status, update.error_code) == (PartitionStatus.FAILED, "POLICY_VIOLATION")
    assert "cleanup.policy" in (update.error_message or "")
    for name in (
        "OFFSET_OUT_OF_RANGE",
        "TOPIC_AUTHORIZATION_FAILED",
        "UNSUPPORTED_VERSION",
        "UNKNOWN_SERVER_ERROR",
    ):
        assert run(PartitionOutcome(name))[:2] == ("failed", name)


def test_retriable_errors_fail_once_the_deadline_passed() -> None:
    late = CLAIM.deadline_at + timedelta(milliseconds=1)
    assert run(PartitionOutcome("KAFKA_STORAGE_ERROR"), now=late)[:2] == ("failed", "KAFKA_STORAGE_ERROR")


@given(attempts=st.integers(1, 200), left_ms=st.integers(0, 60_000))
def test_the_next_attempt_is_soon_and_never_after_the_deadline(attempts: int, left_ms: int) -> None:
    claim = CLAIM._replace(attempts=attempts, deadline_at=NOW + timedelta(milliseconds=left_ms))
    for outcome in (PartitionOutcome("NETWORK_EXCEPTION"), PartitionOutcome("REQUEST_TIMED_OUT", 5, 100)):
        status, _, next_at = run(outcome, claim)
        if status != "failed":
            assert NOW <= next_at <= claim.deadline_at
            assert next_at - NOW <= timedelta(milliseconds=POLICY.backoff_max_ms)


@given(attempts=st.integers(-5, 10_000), seed=st.integers(0, 2**32))
def test_backoff_is_capped_jittered_and_never_zero(attempts: int, seed: int) -> None:
    delay = backoff_ms(attempts, 200, 5_000, random.Random(seed))
    ceiling = min(5_000, 200 * 2 ** min(max(attempts - 1, 0), 30))
    assert ceiling / 2 <= delay <= ceiling


@given(left_ms=st.integers(-1_000, 700_000), timeout_ms=st.integers(1, 600_000))
def test_broker_waits_stay_within_the_deadline_and_the_client_timeout(left_ms: int, timeout_ms: int) -> None:
    claim = CLAIM._replace(timeout_ms=timeout_ms, deadline_at=NOW + timedelta(milliseconds=left_ms))
    first = broker_wait_ms(claim, NOW, POLICY)
    assert 1 <= first <= min(timeout_ms, 30_000)
    confirm = broker_wait_ms(claim._replace(status=PartitionStatus.LEADER_TRUNCATED), NOW, POLICY)
    assert 1 <= confirm <= POLICY.confirm_interval_ms
