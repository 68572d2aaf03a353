"""Four-eyes approval rules: which rules match, what they require together, and who may approve."""

from __future__ import annotations

import pytest

from app.domain.approvals import (
    ApprovalRule,
    Exemption,
    Requester,
    RuleSnapshot,
    approving_identities,
    matching_rules,
    refusal,
    requirement,
)
from app.domain.deletion_requests import (
    DeletionStatus,
    IllegalTransition,
    PartitionStatus,
    check_transition,
    overall_status,
)
from app.domain.topic_patterns import TopicSelector

ALICE = Requester("User:alice", ("privacy",))


def rule(
    name: str, selector: TopicSelector, *, required: int = 1, wait: int = 60, exempt: bool = False
) -> ApprovalRule:
    exemptions = frozenset({Exemption.RETENTION}) if exempt else frozenset()
    return ApprovalRule(name, selector, ("Group:officers",), required, wait, exemptions)


def test_matching_rules_and_what_they_require_together() -> None:
    pii = rule("pii", TopicSelector(prefix="customers-"), required=2, wait=600)
    audit = rule("audit", TopicSelector(names=("audit",)), required=1, wait=60, exempt=True)
    rules = [pii, audit]
    assert matching_rules(rules, ["orders"]) == []
    assert requirement([]) is None
    assert matching_rules(rules, ["customers-pii", "audit"]) == [pii, audit]
    # A rule covers retention unless exempted from it; a direct deletion no rule is exempted from.
    assert matching_rules(rules, ["customers-pii", "audit"], via=Exemption.RETENTION) == [pii]
    need = requirement([pii, audit])
    assert need is not None
    assert (need.required, need.expires_after_seconds) == (2, 60)


def test_the_requester_never_approves_not_even_through_a_shared_group() -> None:
    rules = [RuleSnapshot("pii", ("User:alice", "Group:privacy", "Group:officers"), 1)]
    assert refusal(rules, ("User:alice", "Group:privacy"), ALICE) is not None
    bob = ("User:bob", "Group:privacy")
    assert approving_identities(rules[0].approvers, bob, ALICE) == []
    assert "also belongs to" in (refusal(rules, bob, ALICE) or "")
    carol = ("User:carol", "Group:officers", "Group:privacy")
    assert approving_identities(rules[0].approvers, carol, ALICE) == ["Group:officers"]
    assert refusal(rules, carol, ALICE) is None
    assert "not an approver" in (refusal(rules, ("User:eve",), ALICE) or "")


def test_unknown_requester_groups_leave_only_listed_users_to_approve() -> None:
    unknown = Requester("User:alice", (), groups_known=False)
    rules = [RuleSnapshot("pii", ("User:carol", "Group:officers"), 1)]
    carol = ("User:carol", "Group:officers")
    assert approving_identities(rules[0].approvers, carol, unknown) == ["User:carol"]
    assert refusal(rules, carol, unknown) is None
    dave = ("User:dave", "Group:officers")
    assert approving_identities(rules[0].approvers, dave, unknown) == []
    assert "groups are unknown" in (refusal(rules, dave, unknown) or "")


def test_every_matching_rule_must_list_the_approver() -> None:
    rules = [RuleSnapshot("a", ("User:carol",), 1), RuleSnapshot("b", ("User:dave",), 1)]
    assert refusal(rules, ("User:carol",), ALICE) == "you are not an approver of rule 'b'"


def test_waiting_partitions_go_to_pending_or_cancelled_only() -> None:
    check_transition(PartitionStatus.AWAITING_APPROVAL, PartitionStatus.PENDING)
    check_transition(PartitionStatus.AWAITING_APPROVAL, PartitionStatus.CANCELLED)
    with pytest.raises(IllegalTransition):
        check_transition(PartitionStatus.AWAITING_APPROVAL, PartitionStatus.IN_PROGRESS)
    waiting = [PartitionStatus.AWAITING_APPROVAL] * 2
    assert overall_status(waiting) == DeletionStatus.AWAITING_APPROVAL
