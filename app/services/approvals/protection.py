"""Which approval rules protect a set of topics, read in the caller's session: a deletion request's
(``app.services.deletions.submission`` asks before it plans the deletion) and a retention policy's
(``app.services.approvals.policies``); and the preview a protected deletion is held with
(``frozen_preview``).

The preview is what ``"dry_run": true`` shows for the same request, taken from the same facts the stored
offsets come from: per partition the resolved offset (what will be sent), the log start offset and high
watermark when it was asked, the records that go, and every consumer group that has not read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db import approval_models as models
from app.adapters.db.repositories import approvals as repo
from app.adapters.db.repositories.deletions import PlannedPartition
from app.domain.approvals import ApprovalRule, Exemption, Requirement, matching_rules, requirement
from app.domain.deletion_requests import PartitionImpact, unconsumed_groups
from app.domain.topic_patterns import TopicSelector

MAX_FROZEN_GROUPS = 1000


def frozen_preview(planned: Sequence[PlannedPartition], impacts: Sequence[PartitionImpact]) -> dict[str, Any]:
    """The preview stored with the request: per partition what goes, and the groups left behind."""
    by_partition = {impact.partition: impact for impact in impacts}
    partitions = []
    for p in planned:
        impact = by_partition.get(p.partition)
        partitions.append(
            {
                "topic": p.partition.topic,
                "partition": p.partition.partition,
                "resolved_offset": p.resolved_offset,
                "log_start_offset": impact.log_start_offset if impact else None,
                "high_watermark": impact.high_watermark if impact else None,
                "records_deleted": impact.records_deleted if impact else None,
                "unconsumed_groups": [
                    {
                        "group": g.group,
                        "committed_offset": g.committed_offset,
                        "unread_records": g.unread_records,
                    }
                    for g in (impact.groups if impact else ())
                ],
            }
        )
    groups = unconsumed_groups(impacts, ())
    return {
        "records_deleted": sum(i.records_deleted for i in impacts),
        "partitions": partitions,
        "unconsumed_groups": [
            {"group": g.group, "unread_records": g.unread_records, "partitions": g.partitions}
            for g in groups[:MAX_FROZEN_GROUPS]
        ],
    }


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


def protection_of(rules: Sequence[models.ApprovalRule], topics: Sequence[str]) -> Requirement | None:
    """What approval a deletion of ``topics`` needs under its cluster's ``rules`` (None: no rule
    protects them). Most clusters have no rule: nothing to match then."""
    if not rules:
        return None
    return requirement(matching_rules([domain_rule(rule) for rule in rules], topics))
