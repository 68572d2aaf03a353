"""Handing new deletions to this instance's executor in the transaction that stores them, through
``app.domain.executor.ExecutorPort`` (``app.worker.executor.Executor`` implements it).

Without it, the executor of the instance that accepted a deletion would wake up, claim the new rows in a
transaction of its own (one UPDATE of every row, most of a second at 10,000 partitions) and only then
send. Instead the transaction that stores the deletion inserts its first ``claim_batch`` partitions
already claimed by this instance's executor (``Lease``: in_progress, fence 1, first attempt, lease and
deadline from now, what ``claim_due`` would write), gets them back from the insert as claims, and once it
committed the executor sends them at once. A transaction that stores several deletions
(``app.services.deletions.intake``) takes one lease for all of them: their first ``claim_batch``
partitions together are stored claimed and the executor works them as one batch (one DeleteRecords per
leader, each leader's outcomes written back as it answers). Every guarantee of claiming holds:

- another instance skips the rows while the lease runs, as any claimed row, and can only take them over
  with a claim of its own, which bumps the fence and so voids this instance's write-back;
- a crash (or a stop) after the commit leaves them leased until the lease runs out, then any instance
  claims them and resends the same stored offsets; a rollback stores nothing and frees the batch slot;
- instances without an executor (``serve --api-only``), or whose executor has no batch slot free, store
  pending rows and wake their executor; the rows beyond ``claim_batch`` stay pending for any
  instance to claim.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.repositories import deletions as deletions_repo
from app.adapters.db.repositories.deletions import NewDeletion
from app.domain.executor import Claim, ExecutorPort, Lease, Requester


class Handoff:
    """Stores new deletions (``create_deletions``) and, after the commit, hands them to the executor."""

    def __init__(self, executor: ExecutorPort | None) -> None:
        self._executor = executor
        self._lease: Lease | None = None
        self._claims: list[Claim] = []
        self._unclaimed = 0
        self._requesters: dict[str, Requester] = {}

    async def create_deletions(self, session: AsyncSession, new: Sequence[NewDeletion]) -> None:
        """``deletions.create_deletions``, with one lease for all of them when the executor has room: the
        first ``claim_batch`` partitions of them together are stored claimed and come back as claims."""
        if not new:
            return
        if self._executor is not None:
            self._lease = self._executor.reserve()
        self._claims = await deletions_repo.create_deletions(session, new, lease=self._lease)
        self._unclaimed = sum(len(planned) for _, planned in new) - len(self._claims)
        self._requesters = {
            d.id: Requester(d.principal, tuple(d.principal_groups or ()), d.client_host) for d, _ in new
        }

    def committed(self) -> None:
        """The deletions are durable: the executor sends their claimed rows now, as one batch, and looks
        for the rest."""
        if self._executor is None:
            return
        if self._lease is not None:
            self._executor.take(self._lease, self._claims, self._requesters)
        if self._unclaimed:
            self._executor.wake()

    def rolled_back(self) -> None:
        if self._executor is not None and self._lease is not None:
            self._executor.release(self._lease)


@contextlib.asynccontextmanager
async def handoff_to(executor: ExecutorPort | None) -> AsyncIterator[Handoff]:
    """Around the transaction that stores new deletions (``Handoff.create_deletions`` inside it): on a
    normal exit (committed) the executor takes them, on an exception the reservation is given back."""
    handoff = Handoff(executor)
    try:
        yield handoff
    except BaseException:
        handoff.rolled_back()
        raise
    handoff.committed()
