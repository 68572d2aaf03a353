"""The requester of an approval request with their groups: those recorded when they asked, and those their
tokens reported since (``app.auth.principals.Memberships``), so an approver's decision leaves out every
group the requester is known to belong to, whichever token the requester asked with."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.approval_models import ApprovalRequest
from app.adapters.db.repositories import memberships as repo
from app.domain.approvals import Requester


async def requester_of(session: AsyncSession, request: ApprovalRequest) -> Requester:
    """The request's requester with the groups recorded when they asked and those reported for them
    since; their groups are unknown when neither says anything."""
    reported = await repo.reported_groups(session, request.requester)
    recorded = list(request.requester_groups)
    groups = tuple(dict.fromkeys([*recorded, *(reported or [])]))
    return Requester(request.requester, groups, groups_known=reported is not None or bool(recorded))
