"""Authorization checked again right before sending: a binding revoked after a deletion was accepted stops
it. Once per claimed group and deletion, the requester's principals (user and the groups it held when the
API accepted it) must still have DELETE on each topic (partitions whose leader already truncated are only
being confirmed and are not checked again); the partitions of topics that lost it are not sent
and fail with ``AUTHORIZATION_REVOKED`` (the failure is audited with the other partition failures).
If the bindings cannot be read, nothing of the group is sent (the rows are claimed again later).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories import acls as acl_repo
from app.adapters.db.repositories.acls import Requester
from app.adapters.db.repositories.claims import Claim
from app.adapters.db.session import read_session
from app.domain.deletion_requests import PartitionStatus
from app.domain.ports import PartitionOutcome
from app.worker.dispatch import SendGroup

AUTHORIZATION_REVOKED = "AUTHORIZATION_REVOKED"


class Reauthorizer(Protocol):
    async def revoked_topics(
        self, cluster: str, principals: Sequence[str], client_host: str, topics: Sequence[str]
    ) -> dict[str, str]:
        """The topics among ``topics`` the principals may no longer DELETE on, with the reason."""
        ...


async def withhold_revoked(
    reauthorizer: Reauthorizer,
    sessionmaker: async_sessionmaker[AsyncSession],
    group: SendGroup,
    known: Mapping[str, Requester],
) -> tuple[SendGroup, dict[int, PartitionOutcome]]:
    """The group without the partitions whose requester lost DELETE, and those partitions' outcomes.
    ``known``: requesters by deletion id already at hand (a deletion's requester never changes); the
    others are read."""
    by_deletion: dict[str, list[Claim]] = defaultdict(list)
    for claim in group.claims:
        # A leader that already truncated only gets the same offset again to confirm: nothing new is asked.
        if claim.status is not PartitionStatus.LEADER_TRUNCATED:
            by_deletion[claim.deletion_id].append(claim)
    if not by_deletion:
        return group, {}
    requesters = {d: known[d] for d in by_deletion if d in known}
    if unknown := sorted(by_deletion.keys() - requesters.keys()):
        async with read_session(sessionmaker) as session:
            requesters |= await acl_repo.requesters(session, unknown)
    withheld: dict[int, PartitionOutcome] = {}
    for deletion_id, claims in by_deletion.items():
        requester = requesters.get(deletion_id)
        if requester is None:  # the deletion row is gone: nothing may be sent on its behalf
            revoked = {claim.topic: "the deletion no longer exists" for claim in claims}
        else:
            revoked = await reauthorizer.revoked_topics(
                group.cluster, requester.names, requester.client_host, sorted({c.topic for c in claims})
            )
        for claim in claims:
            if claim.topic in revoked:
                withheld[claim.id] = PartitionOutcome(
                    AUTHORIZATION_REVOKED,
                    message=f"{requester.principal if requester else 'the requester'} may no longer DELETE "
                    f"on topic {claim.topic}: {revoked[claim.topic]}; nothing was sent",
                )
    kept = tuple(claim for claim in group.claims if claim.id not in withheld)
    return replace(group, claims=kept), withheld
