"""Retention policies over protected topics: a policy whose topics match a rule that applies to
retention waits for approval when it is created or widened (covers a protected topic its last approval
did not); until approved its sweeps skip everything. Approved, it sweeps unattended.

The topics a policy covers are taken when it is created or changed: names as given, a prefix or regex
against the cluster's topics now, ``read_by_connectors`` alone as every topic of the cluster (what the
sinks read is only known at a sweep, so the service assumes the worst).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.repositories import approvals as repo
from app.adapters.db.retention_models import RetentionPolicy
from app.audit.events import Actor
from app.domain.approvals import ApprovalStatus, SubjectKind, requirement
from app.domain.topic_patterns import TopicSelector
from app.services.approvals import transitions
from app.services.approvals.protection import protecting
from app.services.runtime import Runtime


async def covered_topics(runtime: Runtime, cluster: str, topics: Mapping[str, Any]) -> list[str]:
    """The topics a policy's selection covers now."""
    if topics.get("names"):
        return sorted(topics["names"])
    existing = await runtime.gateway.list_topics(cluster)
    if topics.get("prefix") is not None:
        return TopicSelector(prefix=topics["prefix"]).select(existing)
    if topics.get("regex") is not None:
        return TopicSelector(regex=topics["regex"]).select(existing)
    return sorted(existing)


async def hold_if_protected(
    session: AsyncSession, policy: RetentionPolicy, covered: Sequence[str], actor: Actor
) -> bool:
    """In the transaction that creates or changes ``policy``: hold it for approval when it covers a
    protected topic that its last approval did not; whether it waits now."""
    rules = await protecting(session, policy.cluster, covered, retention=True)
    need = requirement(rules)
    if need is None:
        policy.approval_status = None
        return False
    protected = sorted(t for t in covered if any(rule.topics.matches(t) for rule in rules))
    latest = await repo.latest_request(session, SubjectKind.POLICY, policy.id)
    approved = set(latest.topics) if latest and latest.status == ApprovalStatus.APPROVED.value else None
    if approved is not None and policy.approval_status is None and set(protected) <= approved:
        return False
    await transitions.hold_policy(session, policy, protected, need, actor)
    return True
