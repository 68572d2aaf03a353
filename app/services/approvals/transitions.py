"""Every change of state four-eyes approval makes, one function per transition, each writing the change
and its audit event, and for a deletion its webhook event (``app.adapters.db.repositories.webhooks``), in the
caller's transaction:

    deletion: (new) ─> awaiting_approval ─> approved (then the executor: in_progress, ...)
                                        ├─> rejected
                                        ├─> expired
                                        └─> cancelled (the cancel route)
    policy:   (created or widened) ─> pending ─> approved (approval_status null: sweeps run)
                                              ├─> rejected
                                              └─> expired

A transition of a deletion changes its row only while it is still ``awaiting_approval`` (a concurrent
cancel or decision wins once), and answers whether it did.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.approval_models import ApprovalRequest
from app.adapters.db.models import Deletion
from app.adapters.db.repositories import approvals as repo
from app.adapters.db.repositories import deletions as deletions_repo
from app.adapters.db.repositories.webhooks import enqueue_event
from app.adapters.db.retention_models import RetentionPolicy
from app.audit import NewEvent, append_events
from app.audit.events import Actor, approval_requests
from app.domain.approvals import ApprovalStatus, Requirement, SubjectKind
from app.domain.deletion_requests import DeletionStatus
from app.domain.webhook_events import EventType

POLICY_PENDING = ApprovalStatus.PENDING.value
# The webhook event of each way a waiting deletion ends (a cancel is none, as for any cancelled deletion).
_EVENTS = {
    DeletionStatus.APPROVED: EventType.APPROVED,
    DeletionStatus.REJECTED: EventType.REJECTED,
    DeletionStatus.EXPIRED: EventType.EXPIRED,
}


def _request(
    kind: SubjectKind,
    subject: tuple[str, str],
    cluster: str,
    requester: tuple[str, Sequence[str]],
    topics: Sequence[str],
    need: Requirement,
    now: datetime,
) -> ApprovalRequest:
    return ApprovalRequest(
        cluster=cluster,
        subject_kind=kind.value,
        subject_id=subject[0],
        subject_name=subject[1],
        requester=requester[0],
        requester_groups=list(requester[1]),
        topics=sorted(topics),
        rules=[dataclasses.asdict(rule) for rule in need.rules],
        required_approvals=need.required,
        status=ApprovalStatus.PENDING.value,
        created_at=now,
        expires_at=now + timedelta(seconds=need.expires_after_seconds),
        decided_at=None,
    )


async def hold_deletion(
    session: AsyncSession,
    new: deletions_repo.NewDeletion,
    requested: NewEvent,
    need: Requirement,
    preview: Mapping[str, Any],
    actor: Actor,
) -> ApprovalRequest:
    """Store a new protected deletion ``awaiting_approval`` (its partitions too, so no executor claims
    them) with the approval request and its frozen preview; ``deletion.requested`` and
    ``deletion.awaiting_approval`` are audited."""
    deletion, planned = new
    now = deletion.created_at
    deletion.status = DeletionStatus.AWAITING_APPROVAL.value
    await deletions_repo.create_deletions(session, [(deletion, planned)])
    await repo.hold_partitions(session, deletion.id, now)
    requester = (deletion.principal, deletion.principal_groups)
    request = _request(
        SubjectKind.DELETION,
        (deletion.id, deletion.id),
        deletion.cluster,
        requester,
        deletion.topics,
        need,
        now,
    )
    request.preview = dict(preview)
    await repo.add(session, request)
    waiting = approval_requests.deletion_awaiting_approval(actor, request, now)
    await enqueue_event(session, EventType.AWAITING_APPROVAL, deletion)
    await append_events(session, [dataclasses.replace(requested, occurred_at=now), waiting])
    return request


async def _end_deletion(
    session: AsyncSession, request: ApprovalRequest, status: DeletionStatus, now: datetime
) -> bool:
    finished = status is not DeletionStatus.APPROVED
    result = await session.execute(
        update(Deletion)
        .where(Deletion.id == request.subject_id, Deletion.status == DeletionStatus.AWAITING_APPROVAL.value)
        .values(status=status.value, updated_at=now, finished_at=now if finished else None)
        .execution_options(synchronize_session=False)
    )
    if not getattr(result, "rowcount", 0):
        return False
    if finished:
        await repo.drop_partitions(session, request.subject_id, now)
    else:
        await repo.release_partitions(session, request.subject_id, now)
    request.status = ApprovalStatus(status.value).value
    request.decided_at = now
    await session.flush()
    if (deletion := await session.get(Deletion, request.subject_id, populate_existing=True)) is not None:
        await enqueue_event(session, _EVENTS[status], deletion)
    return True


async def approve_deletion(
    session: AsyncSession, request: ApprovalRequest, approvers: Sequence[str], actor: Actor, now: datetime
) -> bool:
    """awaiting_approval -> approved: the partitions become pending, for the executor to claim."""
    if not await _end_deletion(session, request, DeletionStatus.APPROVED, now):
        return False
    await append_events(session, [approval_requests.deletion_approved(actor, request, approvers, now)])
    return True


async def reject_deletion(
    session: AsyncSession, request: ApprovalRequest, comment: str, actor: Actor, now: datetime
) -> bool:
    """awaiting_approval -> rejected: every partition cancelled, nothing sent."""
    if not await _end_deletion(session, request, DeletionStatus.REJECTED, now):
        return False
    await append_events(session, [approval_requests.deletion_rejected(actor, request, comment, now)])
    return True


async def expire_deletion(session: AsyncSession, request: ApprovalRequest, now: datetime) -> bool:
    """awaiting_approval -> expired (not approved in time): every partition cancelled, nothing sent."""
    if not await _end_deletion(session, request, DeletionStatus.EXPIRED, now):
        return False
    await append_events(session, [approval_requests.deletion_expired(request, now)])
    return True


async def cancel_waiting(session: AsyncSession, deletion_id: str, now: datetime) -> None:
    """The cancel route cancelled a deletion awaiting approval: its request ends too (the cancel route
    audits ``deletion.cancelled``)."""
    request = await repo.latest_request(session, SubjectKind.DELETION, deletion_id)
    if request is not None and request.status == ApprovalStatus.PENDING.value:
        request.status = ApprovalStatus.CANCELLED.value
        request.decided_at = now
        await session.flush()


async def cancel_policy_request(session: AsyncSession, policy_id: str, now: datetime) -> None:
    """The policy is deleted: a request still pending for it ends ``cancelled`` (the delete route audits
    ``policy.deleted``)."""
    request = await repo.latest_request(session, SubjectKind.POLICY, policy_id)
    if request is not None and request.status == ApprovalStatus.PENDING.value:
        request.status = ApprovalStatus.CANCELLED.value
        request.decided_at = now
        await session.flush()


async def hold_policy(
    session: AsyncSession, policy: RetentionPolicy, topics: Sequence[str], need: Requirement, actor: Actor
) -> ApprovalRequest:
    """A created or widened policy covering protected topics waits for approval: sweeps skip it."""
    now = datetime.now(UTC)
    earlier = await repo.latest_request(session, SubjectKind.POLICY, policy.id)
    if earlier is not None and earlier.status == ApprovalStatus.PENDING.value:
        earlier.status = ApprovalStatus.CANCELLED.value  # superseded by the new round
        earlier.decided_at = now
    owner = (policy.owner, policy.owner_groups)
    request = _request(SubjectKind.POLICY, (policy.id, policy.name), policy.cluster, owner, topics, need, now)
    request.round = 1 if earlier is None else earlier.round + 1
    policy.approval_status = POLICY_PENDING
    await repo.add(session, request)
    await append_events(session, [approval_requests.policy_awaiting_approval(actor, request, now)])
    return request


async def _end_policy(
    session: AsyncSession, request: ApprovalRequest, status: ApprovalStatus, now: datetime
) -> RetentionPolicy | None:
    policy = await session.get(RetentionPolicy, request.subject_id)
    request.status = status.value
    request.decided_at = now
    if policy is not None:
        policy.approval_status = None if status is ApprovalStatus.APPROVED else status.value
        policy.next_run_at = now
    await session.flush()
    return policy


async def approve_policy(
    session: AsyncSession, request: ApprovalRequest, approvers: Sequence[str], actor: Actor, now: datetime
) -> None:
    """pending -> approved: the policy's sweeps run unattended from now on."""
    await _end_policy(session, request, ApprovalStatus.APPROVED, now)
    await append_events(session, [approval_requests.policy_approved(actor, request, approvers, now)])


async def reject_policy(
    session: AsyncSession, request: ApprovalRequest, comment: str, actor: Actor, now: datetime
) -> None:
    """pending -> rejected: the policy stays, and its sweeps skip everything until it is changed."""
    await _end_policy(session, request, ApprovalStatus.REJECTED, now)
    await append_events(session, [approval_requests.policy_rejected(actor, request, comment, now)])


async def expire_policy(session: AsyncSession, request: ApprovalRequest, now: datetime) -> None:
    """pending -> expired: as a rejection, decided by the clock."""
    await _end_policy(session, request, ApprovalStatus.EXPIRED, now)
    await append_events(session, [approval_requests.policy_approval_expired(request, now)])
