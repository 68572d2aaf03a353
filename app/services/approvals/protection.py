"""Which approval rules protect a set of topics, read in the caller's transaction: a deletion request's
(``app.services.deletions.intake`` asks it in the transaction that would store the deletion) and a
retention policy's (``app.services.approvals.policies``)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db import approval_models as models
from app.adapters.db.repositories import approvals as repo
from app.domain.approvals import ApprovalRule, Exemption, Requirement, matching_rules, requirement
from app.domain.topic_patterns import TopicSelector


def domain_rule(rule: models.ApprovalRule) -> ApprovalRule:
    topics = rule.topics
    selector = TopicSelector(
        prefix=topics.get("prefix"), regex=topics.get("regex"), names=tuple(topics.get("names") or ())
    )
    return ApprovalRule(
        rule.name,
        selector,
        tuple(rule.approvers),
        rule.required_approvals,
        rule.expires_after_seconds,
        frozenset(Exemption(way) for way in rule.exemptions),
    )


async def protecting(
    session: AsyncSession, cluster: str, topics: Sequence[str], *, via: Exemption | None = None
) -> list[ApprovalRule]:
    """The cluster's rules that protect any of ``topics`` against a deletion made ``via`` that way (None:
    a direct deletion)."""
    rules = [domain_rule(rule) for rule in await repo.list_rules(session, cluster)]
    return matching_rules(rules, topics, via=via)


class RuleBook:
    """The approval rules of the clusters one transaction asks about, each cluster's read once."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session
        self._rules: dict[str, list[ApprovalRule]] = {}

    async def requirement(self, cluster: str, topics: Sequence[str]) -> Requirement | None:
        """What approval a deletion of ``topics`` needs (None: no rule protects them)."""
        rules = self._rules.get(cluster)
        if rules is None:
            rules = self._rules[cluster] = [
                domain_rule(rule) for rule in await repo.list_rules(self._session, cluster)
            ]
        return requirement(matching_rules(rules, topics))
