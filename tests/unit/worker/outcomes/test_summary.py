"""A completion summary made ahead (``app.worker.outcomes.summary``) is exactly the one made at completion."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime

from helpers.claims import claim

from app.adapters.db.repositories.claims import LockedDeletion, PartitionUpdate
from app.audit import canonical_json, canonical_object, rendered
from app.domain.deletions import DeletionStatus, PartitionStatus
from app.domain.executor import Claim
from app.worker.outcomes import events, transaction
from app.worker.outcomes.summary import SUMMARY_AHEAD_PARTITIONS, OutcomeSummary, summary_ahead

NOW = datetime(2026, 11, 25, tzinfo=UTC)
OWNER = "executor_vm:1:abc"
TOPICS = ["b-x", "B", "a_b", "a-b", "Z", "ab", "a.b"]
BASE = claim(NOW, deletion_id="d1", fence=3, attempts=2)


def _claims(count: int, deletion_id: str = "d1") -> list[Claim]:
    claims = [
        BASE._replace(
            id=1000 + i,
            deletion_id=deletion_id,
            topic=TOPICS[i % len(TOPICS)],
            partition=i // len(TOPICS),
            resolved_offset=i * 7,
            attempts=1 + i % 3,
            fence=1 + i % 4,
        )
        for i in range(count)
    ]
    random.Random(7).shuffle(claims)  # the summary's order is its own, not the claims'
    return claims


def _outcome(claim: Claim, index: int) -> PartitionUpdate:
    failed = index % 5 == 0
    return PartitionUpdate(
        id=claim.id,
        fence=claim.fence,
        status=PartitionStatus.FAILED if failed else PartitionStatus.SUCCEEDED,
        low_watermark=claim.resolved_offset + index % 2,
        leader_log_start_offset=claim.resolved_offset,
        error_code="POLICY_VIOLATION" if failed else None,
        error_message="no" if failed else None,
        next_attempt_at=NOW,
    )


def _completion(claims: list[Claim], updates: list[PartitionUpdate]) -> dict[str, object]:
    """The summary's columns, built here row by row in (topic, partition) order."""
    by_id = {u.id: u for u in updates}
    ordered = sorted(claims, key=lambda c: (c.topic, c.partition))
    rows = [by_id[c.id] for c in ordered]
    return {
        "topic": [c.topic for c in ordered],
        "partition": [c.partition for c in ordered],
        "resolved_offset": [c.resolved_offset for c in ordered],
        "status": [u.status.value for u in rows],
        "low_watermark": [u.low_watermark for u in rows],
        "leader_log_start_offset": [u.leader_log_start_offset for u in rows],
        "error_code": [u.error_code for u in rows],
        "attempts": [c.attempts for c in ordered],
        "fence": [u.fence for u in rows],
        "worker": [OWNER] * len(rows),
    }


def test_the_columns_and_their_json_are_those_made_at_completion() -> None:
    claims = _claims(60)
    updates = [_outcome(c, i) for i, c in enumerate(claims)]
    random.Random(3).shuffle(updates)  # leaders answer in any order
    made = OutcomeSummary(claims, OWNER).outcomes(updates)
    assert made is not None
    columns, columns_json = made
    assert columns == _completion(claims, updates)
    assert columns_json == canonical_json(columns)
    assert columns["topic"][:3] == ["B", "B", "B"]  # code point order, then partitions


def test_nothing_is_made_unless_every_partition_is_written_with_its_offsets() -> None:
    claims = _claims(20)  # retried partitions among them: their rows may hold offsets of earlier answers
    summary = OutcomeSummary(claims, OWNER)
    updates = [_outcome(c, i) for i, c in enumerate(claims)]
    assert summary.outcomes(updates[1:]) is None
    assert summary.outcomes([*updates[1:], updates[2]]) is None  # one twice, one missing
    assert summary.outcomes([*updates[1:], updates[0]._replace(id=99)]) is None  # not one of its rows
    assert summary.outcomes([*updates[1:], updates[0]._replace(low_watermark=None)]) is None
    assert summary.outcomes([*updates[1:], updates[0]._replace(leader_log_start_offset=None)]) is None
    assert summary.outcomes(updates) is not None


def test_on_first_attempts_an_offset_the_answer_lacks_is_null() -> None:
    """A v0-v2 DeleteRecords answer has no leader log start offset; rows never written before hold
    none either, so the summary is made without reading them back."""
    claims = [c._replace(attempts=1) for c in _claims(20)]
    updates = [_outcome(c, i)._replace(leader_log_start_offset=None) for i, c in enumerate(claims)]
    made = OutcomeSummary(claims, OWNER).outcomes(updates)
    assert made is not None
    columns, _ = made
    assert columns == _completion(claims, updates)
    assert set(columns["leader_log_start_offset"]) == {None}
    assert OutcomeSummary(claims, OWNER).outcomes(updates[1:]) is None


def test_made_only_for_many_partitions_of_one_deletion() -> None:
    many = {c.id: c for c in _claims(SUMMARY_AHEAD_PARTITIONS)}
    assert summary_ahead(many, OWNER) is not None
    assert summary_ahead(dict(list(many.items())[1:]), OWNER) is None
    other = next(iter(many.values()))._replace(id=1, deletion_id="d2")
    assert summary_ahead({**many, 1: other}, OWNER) is None


def test_the_completion_event_is_rendered_around_the_columns() -> None:
    claims = _claims(40)
    by_id = {c.id: c for c in claims}
    updates = [_outcome(c, i) for i, c in enumerate(claims)]
    counts = dict(Counter(u.status for u in updates))
    locked = {"d1": LockedDeletion("in_progress", len(claims))}
    known = transaction._known(updates, [], by_id, locked, ())
    # The summary made ahead says which worker it was made for: its columns are the ones used.
    summary = OutcomeSummary(claims, "made-ahead")
    [event] = transaction._completions_ahead(known, by_id, {"d1": claims[0]}, locked, OWNER, summary).values()
    columns = {**_completion(claims, updates), "worker": ["made-ahead"] * len(claims)}
    expected = rendered(
        events.completion_event(claims[0], DeletionStatus.PARTIALLY_FAILED, counts, columns, OWNER)
    )
    assert (event.details, event.details_json) == (expected.details, expected.details_json)


def test_canonical_object_is_canonical_json_of_the_object() -> None:
    value = {"é": [1, None], "B": {"z": 1, "a": "x"}, "a": 'q"uote', "": True, "a b": [], "\\": 0}
    assert canonical_object({k: canonical_json(v) for k, v in value.items()}) == canonical_json(value)
