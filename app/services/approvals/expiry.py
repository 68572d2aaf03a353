"""Ending approval requests nobody approved in time: a deletion becomes ``expired`` (nothing sent), a
retention policy's approval ``expired`` (its sweeps keep skipping it until it is changed)."""

from __future__ import annotations

from datetime import UTC, datetime

from app.adapters.db.repositories import approvals as repo
from app.adapters.db.session import read_session, write_transaction
from app.domain.approvals import ApprovalStatus, SubjectKind
from app.services.approvals import transitions
from app.services.runtime import Runtime


async def expire_overdue(runtime: Runtime, now: datetime | None = None) -> int:
    """Expire the pending requests whose time ran out (at most 100 per call); how many. Idle calls only
    read."""
    now = now or datetime.now(UTC)
    async with read_session(runtime.sessionmaker) as session:
        if not await repo.overdue_requests(session, now):
            return 0
    expired = 0
    async with write_transaction(runtime.sessionmaker) as session:
        for request in await repo.overdue_requests(session, now, for_update=True):
            if request.subject_kind == SubjectKind.DELETION.value:
                if await transitions.expire_deletion(session, request, now):
                    expired += 1
                else:  # the deletion left awaiting_approval without its request (it is gone)
                    request.status, request.decided_at = ApprovalStatus.CANCELLED.value, now
            else:
                await transitions.expire_policy(session, request, now)
                expired += 1
    return expired
