"""The groups of requesters: what their tokens reported, kept so an approver's decision leaves out every
group the requester is known to belong to, whichever token the requester asked with.

Every authenticated request whose token carries a groups claim reports them (``app.auth.dependency``);
each instance writes a principal's groups when they differ from what it last wrote, so a steady caller
costs no write. A failed write is logged and retried with the next token: the groups already stored (or
none, which refuses approval through a group) keep deciding meanwhile.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from datetime import UTC, datetime

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.approval_models import ApprovalRequest
from app.adapters.db.faults import recorded_commits
from app.adapters.db.repositories import memberships as repo
from app.adapters.db.session import write_transaction
from app.auth import Principal
from app.domain.approvals import Requester

log = logging.getLogger("kafka_purge.approvals")

REMEMBERED = 10_000


class Memberships:
    """Reports principals' groups to the ``membership`` table, skipping what this instance wrote last."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self._sessionmaker = sessionmaker
        self._written: OrderedDict[str, tuple[str, ...]] = OrderedDict()

    async def report(self, principal: Principal) -> None:
        groups = tuple(sorted(principal.groups))
        if self._written.get(principal.name) == groups:
            self._written.move_to_end(principal.name)
            return
        try:
            # Writing the same groups again changes nothing, so this commit leaves the request free to
            # run again after a database fault (``app.adapters.db.faults``): it is recorded apart.
            with recorded_commits():
                async with write_transaction(self._sessionmaker) as session:
                    await repo.report(session, principal.name, groups, datetime.now(UTC))
        except (SQLAlchemyError, OSError) as exc:
            log.warning("could not store the groups of %s: %s", principal.name, type(exc).__name__)
            return
        self._written[principal.name] = groups
        self._written.move_to_end(principal.name)
        while len(self._written) > REMEMBERED:
            self._written.popitem(last=False)


async def requester_of(session: AsyncSession, request: ApprovalRequest) -> Requester:
    """The request's requester with the groups recorded when they asked and those reported for them
    since; their groups are unknown when neither says anything."""
    reported = await repo.reported_groups(session, request.requester)
    recorded = list(request.requester_groups)
    groups = tuple(dict.fromkeys([*recorded, *(reported or [])]))
    return Requester(request.requester, groups, groups_known=reported is not None or bool(recorded))
