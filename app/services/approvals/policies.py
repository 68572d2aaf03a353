"""Retention policies over protected topics. A rule covers retention unless it is exempted from it
(``Exemption.RETENTION``), so a policy waits for approval whenever it covers a protected topic that its
last approval did not answer for (that topic, under that rule):

- when it is created or changed (``app.services.retention.policies``);
- when a rule is created or changed: every policy of the cluster is looked at in the rule's transaction;
- at a sweep that meets such a topic (a topic created since, one a connector reads now, a rule added
  before this check existed): the sweep deletes nothing and the policy waits.

Until approved its sweeps skip everything. Approved, it sweeps unattended.

The topics a policy covers are taken when it is created or changed: names as given, a prefix or regex
against the cluster's topics now, ``read_by_connectors`` alone as every topic of the cluster (what the
sinks read is only known at a sweep, so the service assumes the worst); a sweep checks the topics it
actually matched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.approval_models import ApprovalRequest
from app.adapters.db.repositories import approvals as repo
from app.adapters.db.repositories import policies as policies_repo
from app.adapters.db.retention_models import RetentionPolicy
from app.adapters.db.session import read_session, write_transaction
from app.audit.events import Actor
from app.domain.approvals import (
    ApprovalRule,
    ApprovalStatus,
    Exemption,
    SubjectKind,
    matching_rules,
    requirement,
)
from app.domain.topic_patterns import TopicSelector
from app.services.approvals import transitions
from app.services.runtime import Runtime

# A rejected or expired policy skips everything until its owner changes it (which asks again).
_ENDED = frozenset({ApprovalStatus.REJECTED.value, ApprovalStatus.EXPIRED.value})
# The request a running (approved) or waiting (pending) policy rests on.
_ANSWERING = frozenset({ApprovalStatus.APPROVED.value, ApprovalStatus.PENDING.value})


def covered_by(topics: Mapping[str, Any], existing: Sequence[str]) -> list[str]:
    """The topics a policy's selection covers among the cluster's ``existing`` topics."""
    if topics.get("names"):
        return sorted(topics["names"])
    if topics.get("prefix") is not None:
        return TopicSelector(prefix=topics["prefix"]).select(existing)
    if topics.get("regex") is not None:
        return TopicSelector(regex=topics["regex"]).select(existing)
    return sorted(existing)


async def covered_topics(runtime: Runtime, cluster: str, topics: Mapping[str, Any]) -> list[str]:
    """The topics a policy's selection covers now."""
    if topics.get("names"):
        return sorted(topics["names"])
    return covered_by(topics, await runtime.gateway.list_topics(cluster))


def _answered(
    latest: ApprovalRequest | None,
    policy: RetentionPolicy,
    protected: Sequence[str],
    rules: Sequence[ApprovalRule],
) -> bool:
    """Whether the policy's latest approval request answers for every protected topic under every rule
    protecting it: approved (the policy runs) or still pending (it waits for that very request)."""
    expected = policy.approval_status or ApprovalStatus.APPROVED.value
    if expected not in _ANSWERING or latest is None or latest.status != expected:
        return False
    asked_rules = {rule["name"] for rule in latest.rules}
    return set(protected) <= set(latest.topics) and {rule.name for rule in rules} <= asked_rules


async def _protection(
    session: AsyncSession, policy: RetentionPolicy, covered: Sequence[str]
) -> tuple[list[ApprovalRule], list[str]]:
    """The rules protecting ``covered`` against retention, and the topics among them they protect."""
    known = await repo.cluster_rules(session, policy.cluster)
    rules = matching_rules(known, covered, via=Exemption.RETENTION)
    return rules, sorted(t for t in covered if any(rule.topics.matches(t) for rule in rules))


async def _unanswered(
    session: AsyncSession, policy: RetentionPolicy, rules: Sequence[ApprovalRule], protected: Sequence[str]
) -> bool:
    latest = await repo.latest_request(session, SubjectKind.POLICY, policy.id)
    return bool(rules) and not _answered(latest, policy, protected, rules)


async def hold_if_protected(
    session: AsyncSession, policy: RetentionPolicy, covered: Sequence[str], actor: Actor
) -> bool:
    """In the transaction that creates or changes ``policy`` (or a rule of its cluster): hold it for
    approval when it covers a protected topic that its last approval did not answer for; release it when
    nothing protects it any more; whether it waits now."""
    rules, protected = await _protection(session, policy, covered)
    need = requirement(rules)
    if need is None:
        if policy.approval_status is not None:
            await transitions.cancel_policy_request(session, policy.id, datetime.now(UTC))
        policy.approval_status = None
        return False
    if not await _unanswered(session, policy, rules, protected):
        return policy.approval_status is not None
    await transitions.hold_policy(session, policy, protected, need, actor)
    return True


async def hold_cluster_policies(
    session: AsyncSession, cluster: str, existing: Sequence[str], actor: Actor
) -> list[str]:
    """In the transaction that creates or changes a rule of ``cluster``: hold every policy of the cluster
    (running or already waiting) that now covers a protected topic its last approval did not answer for;
    the names of those that wait now."""
    waiting = []
    for policy in await policies_repo.list_policies(session, cluster):
        if policy.approval_status in _ENDED:
            continue
        if await hold_if_protected(session, policy, covered_by(policy.topics, existing), actor):
            waiting.append(policy.name)
    return waiting


async def hold_at_sweep(runtime: Runtime, policy: RetentionPolicy, matched: Sequence[str]) -> bool:
    """A sweep matched ``matched``: when one of them is protected and the policy's last approval did not
    answer for it, hold the policy (audited as its owner's) instead of deleting; whether it waits."""
    async with read_session(runtime.sessionmaker) as session:
        if not await _unanswered(session, policy, *await _protection(session, policy, matched)):
            return False
    async with write_transaction(runtime.sessionmaker) as session:
        current = await policies_repo.get_policy_by_id(session, policy.id)
        if current is None or current.approval_status is not None:
            return True  # deleted, or held, meanwhile: nothing to sweep
        return await hold_if_protected(session, current, matched, Actor(current.owner, current.owner_host))
