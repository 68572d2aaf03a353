"""Grouping claimed partitions into gateway calls."""

from __future__ import annotations

from datetime import UTC, datetime

from helpers.claims import claim

from app.domain.deletion_requests import PartitionStatus
from app.worker.dispatch import group_claims
from app.worker.retries import Policy

NOW = datetime(2026, 11, 22, tzinfo=UTC)
POLICIES = {"demo": Policy(200, 5_000, 500, 40_000), "other": Policy(200, 5_000, 500, 40_000)}
BASE = claim(NOW, deletion_id="a")


def test_one_call_per_cluster_leader_only_and_wait() -> None:
    claims = [
        BASE._replace(id=1, partition=0),
        BASE._replace(id=2, partition=1),
        BASE._replace(id=3, partition=2, leader_only=True),
        BASE._replace(id=4, partition=3, cluster="other"),
        BASE._replace(id=5, partition=4, status=PartitionStatus.LEADER_TRUNCATED),
    ]
    groups = group_claims(claims, NOW, POLICIES)
    assert sorted((g.cluster, g.leader_only, g.timeout_ms, [c.id for c in g.claims]) for g in groups) == [
        ("demo", False, 500, [5]),
        ("demo", False, 15_000, [1, 2]),
        ("demo", True, 15_000, [3]),
        ("other", False, 15_000, [4]),
    ]


def test_a_partition_named_by_two_deletions_goes_into_separate_calls() -> None:
    claims = [
        BASE._replace(id=1, deletion_id="a", resolved_offset=10),
        BASE._replace(id=2, deletion_id="b", resolved_offset=5),
        BASE._replace(id=3, deletion_id="b", partition=1),
    ]
    groups = group_claims(claims, NOW, POLICIES)
    assert [[c.id for c in g.claims] for g in groups] == [[1, 3], [2]]


def test_one_deletions_rows_in_one_state_make_one_call_in_their_order() -> None:
    claims = [BASE._replace(id=10 - n, partition=n) for n in range(5)]
    [group] = group_claims(claims, NOW, POLICIES)
    assert (group.cluster, group.leader_only, group.timeout_ms) == ("demo", False, 15_000)
    assert group.claims == tuple(claims)
    # The same wait as when they share a call with another deletion's rows.
    mixed = group_claims([*claims, BASE._replace(id=99, deletion_id="b", partition=9)], NOW, POLICIES)
    assert [(g.timeout_ms, len(g.claims)) for g in mixed] == [(15_000, 6)]
