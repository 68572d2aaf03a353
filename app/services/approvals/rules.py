"""A cluster's approval rules: create, read, change, delete (ALTER on CLUSTER to change, DESCRIBE on
CLUSTER to read, as the cluster's ACL bindings), and the rules protecting given topics.

Every change is audited in its transaction with the rule as it stands after the change (before it, for a
deletion); an exemption granted is audited on its own too (``approval_rule.exempted``). In the same
transaction every retention policy of the cluster the rule now protects, and whose last approval did not
answer for it, is held for approval (``app.services.approvals.policies``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db import approval_models as models
from app.adapters.db.repositories import approvals as repo
from app.adapters.db.session import read_session, write_transaction
from app.audit import append_event, events
from app.audit.events import Actor
from app.auth import Principal
from app.domain.acl import Operation
from app.domain.approvals import Exemption
from app.errors import ClusterNotFound, Conflict, NotFound
from app.schemas.approvals import ApprovalRuleCreate, ApprovalRuleRead, ApprovalRuleUpdate, RuleTopics
from app.services.approvals.policies import hold_cluster_policies
from app.services.runtime import Runtime


def rule_read(rule: models.ApprovalRule) -> ApprovalRuleRead:
    return ApprovalRuleRead.model_validate(rule, from_attributes=True)


def _topics_json(topics: RuleTopics) -> dict[str, Any]:
    return topics.model_dump(exclude_none=True)


def _exemptions(given: Sequence[Exemption]) -> list[str]:
    return sorted({way.value for way in given})


async def _audit_change(
    session: AsyncSession,
    actor: Actor,
    rule: models.ApprovalRule,
    before: Sequence[str],
    existing: Sequence[str],
) -> None:
    """The exemptions granted (if any), then hold the policies the rule now protects."""
    if granted := sorted(set(rule.exemptions) - set(before)):
        exempted = events.approval_rule_exempted(actor, rule.cluster, rule.name, granted, rule.exemptions)
        await append_event(session, exempted)
    await hold_cluster_policies(session, rule.cluster, existing, actor)


def _known(runtime: Runtime, cluster: str) -> None:
    if cluster not in runtime.settings.clusters:
        raise ClusterNotFound(f"Unknown cluster {cluster!r}.")


def _read(rule: models.ApprovalRule) -> Mapping[str, Any]:
    return rule_read(rule).model_dump(mode="json", exclude={"cluster", "name"})


async def _check(
    runtime: Runtime, principal: Principal, cluster: str, operation: Operation, request_id: str
) -> None:
    _known(runtime, cluster)
    await runtime.authorization.check_cluster(principal, cluster, operation, request_id=request_id)


async def create_rule(
    runtime: Runtime, principal: Principal, cluster: str, body: ApprovalRuleCreate, *, request_id: str
) -> models.ApprovalRule:
    """A new rule (ALTER on CLUSTER); 409 when the cluster has a rule of that name."""
    await _check(runtime, principal, cluster, Operation.ALTER, request_id)
    now = datetime.now(UTC)
    rule = models.ApprovalRule(
        id=str(uuid.uuid4()),
        cluster=cluster,
        name=body.name,
        topics=_topics_json(body.topics),
        approvers=sorted(set(body.approvers)),
        required_approvals=body.required_approvals,
        expires_after_seconds=body.expires_after_seconds,
        exemptions=_exemptions(body.exemptions),
        created_by=principal.name,
        created_at=now,
        updated_at=now,
    )
    existing = await runtime.gateway.list_topics(cluster)
    actor = Actor.of(principal, request_id)
    try:
        async with write_transaction(runtime.sessionmaker) as session:
            if await repo.get_rule(session, cluster, body.name) is not None:
                raise Conflict(f"Cluster {cluster!r} already has an approval rule {body.name!r}.")
            await repo.add(session, rule)
            await append_event(session, events.approval_rule_created(actor, cluster, rule.name, _read(rule)))
            await _audit_change(session, actor, rule, [], existing)
    except IntegrityError as exc:  # a concurrent request created it first
        raise Conflict(f"Cluster {cluster!r} already has an approval rule {body.name!r}.") from exc
    return rule


async def list_rules(
    runtime: Runtime, principal: Principal, cluster: str, *, request_id: str
) -> list[models.ApprovalRule]:
    """The cluster's rules (DESCRIBE on CLUSTER)."""
    await _check(runtime, principal, cluster, Operation.DESCRIBE, request_id)
    async with read_session(runtime.sessionmaker) as session:
        return await repo.list_rules(session, cluster)


async def get_rule(
    runtime: Runtime, principal: Principal, cluster: str, name: str, *, request_id: str
) -> models.ApprovalRule:
    """One rule (DESCRIBE on CLUSTER); 404 when there is none."""
    await _check(runtime, principal, cluster, Operation.DESCRIBE, request_id)
    async with read_session(runtime.sessionmaker) as session:
        return _found(await repo.get_rule(session, cluster, name), cluster, name)


def _found(rule: models.ApprovalRule | None, cluster: str, name: str) -> models.ApprovalRule:
    if rule is None:
        raise NotFound(f"Cluster {cluster!r} has no approval rule {name!r}.")
    return rule


async def update_rule(
    runtime: Runtime,
    principal: Principal,
    cluster: str,
    name: str,
    body: ApprovalRuleUpdate,
    *,
    request_id: str,
) -> models.ApprovalRule:
    """Change a rule (ALTER on CLUSTER)."""
    await _check(runtime, principal, cluster, Operation.ALTER, request_id)
    existing = await runtime.gateway.list_topics(cluster)
    actor = Actor.of(principal, request_id)
    async with write_transaction(runtime.sessionmaker) as session:
        rule = _found(await repo.get_rule(session, cluster, name), cluster, name)
        before = list(rule.exemptions)
        changes = body.model_dump(exclude_unset=True, exclude_none=True)
        if body.topics is not None:
            changes["topics"] = _topics_json(body.topics)
        if body.approvers is not None:
            changes["approvers"] = sorted(set(body.approvers))
        if body.exemptions is not None:
            changes["exemptions"] = _exemptions(body.exemptions)
        for key, value in changes.items():
            setattr(rule, key, value)
        rule.updated_at = datetime.now(UTC)
        await session.flush()
        await append_event(session, events.approval_rule_updated(actor, cluster, rule.name, _read(rule)))
        await _audit_change(session, actor, rule, before, existing)
    return rule


async def delete_rule(
    runtime: Runtime, principal: Principal, cluster: str, name: str, *, request_id: str
) -> None:
    """Delete a rule (ALTER on CLUSTER); requests already waiting keep its approvers as they were."""
    await _check(runtime, principal, cluster, Operation.ALTER, request_id)
    async with write_transaction(runtime.sessionmaker) as session:
        rule = _found(await repo.get_rule(session, cluster, name), cluster, name)
        deleted = events.approval_rule_deleted(
            Actor.of(principal, request_id), cluster, rule.name, _read(rule)
        )
        await repo.delete_rule(session, rule)
        await append_event(session, deleted)
