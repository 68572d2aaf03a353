"""``EarlyInsert``: a large deletion's rows inserted while its checks still wait for the cluster.

What it buys: a deletion of thousands of partitions spends tens of milliseconds in PostgreSQL inserting
its rows (about 60-80 ms at 10,000) and about as long waiting for the cluster's answers to its checks
(metadata, configs, high watermarks, consumer groups). When every entry names a partition and a concrete
offset, the rows the checks will plan are known from the request alone, so the INSERT runs in a
transaction of its own beside the checks instead of after them, and the deletion reaches Kafka that much
sooner (``bench/service_bench.py``).

Every guarantee of the usual path holds: the transaction commits, with the ``deletion.requested``
event, only once the checks passed and planned exactly the predicted rows; a refused request, another
plan, a key stored meanwhile, an approval rule on its topics (read in the transaction, before the
INSERT) or any database error rolls it back and leaves the request to the usual
path (``app.services.deletions.intake``), which answers it as if nothing had been tried. Until the commit
nobody sees the rows, and the audit head is locked only for the final append. PostgreSQL only: SQLite
has one write lock, which the transaction would hold while the cluster is asked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import Deletion
from app.adapters.db.repositories import deletions as repo
from app.adapters.db.session import write_transaction
from app.audit import NewEvent, append_events
from app.domain.executor import ExecutorPort
from app.services.approvals.protection import RuleBook
from app.services.deletions.handoff import handoff_to
from app.services.deletions.intake import Stored, key_of
from app.services.webhooks.outbox import accepted_events, enqueue_events

log = logging.getLogger("kafka_purge.api")

# Below this many partitions group commit (several requests per transaction) saves more than the overlap.
EARLY_MIN_PARTITIONS = 1_000


class _Abandoned(Exception):
    """The checks refused the request or planned other rows, its key is taken, or an approval rule
    protects its topics (the usual path holds it for approval): roll back."""


class EarlyInsert:
    """One deletion's rows, inserted in a transaction of its own as soon as it is created; ``commit`` once
    the checks passed, ``abandon`` otherwise."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        executor: ExecutorPort | None,
        deletion: Deletion,
        planned: Sequence[repo.PlannedPartition],
        *,
        gated: bool,
    ) -> None:
        self._sessionmaker, self._executor = sessionmaker, executor
        self.deletion, self._planned, self._gated = deletion, planned, gated
        self._verdict: asyncio.Future[NewEvent | None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._insert(), name="early insert")

    async def commit(self, planned: Sequence[repo.PlannedPartition], event: NewEvent) -> Stored | None:
        """Append ``event`` and commit, if the checks planned the predicted rows; None when they did not
        or the transaction failed: the caller stores the deletion the usual way then."""
        if list(planned) != list(self._planned):
            await self.abandon()
            return None
        self._verdict.set_result(event)
        try:
            # Shielded: a caller that goes away now leaves its deletion stored all the same, as intake does.
            return await asyncio.shield(self._task)
        except _Abandoned:
            return None
        except Exception:
            log.warning("storing a deletion early failed; storing it the usual way", exc_info=True)
            return None

    async def abandon(self) -> None:
        """Roll the insert back (the request was refused)."""
        if not self._verdict.done():
            self._verdict.set_result(None)
        await asyncio.gather(self._task, return_exceptions=True)

    async def _insert(self) -> Stored:
        deletion = self.deletion
        async with handoff_to(self._executor) as handoff, write_transaction(self._sessionmaker) as session:
            key = key_of(deletion)
            if key is not None and await repo.find_by_idempotency_keys(session, [key]):
                raise _Abandoned("Idempotency-Key stored meanwhile")
            if self._gated and await RuleBook(session).requirement(deletion.cluster, deletion.topics):
                raise _Abandoned("an approval rule protects its topics")
            deletion.created_at = deletion.updated_at = datetime.now(UTC)
            await handoff.create_deletions(session, [(deletion, self._planned)])
            await enqueue_events(session, accepted_events([deletion]), deletion.created_at)
            event = await self._verdict
            if event is None:
                raise _Abandoned("the checks refused the request")
            await append_events(session, [dataclasses.replace(event, occurred_at=deletion.created_at)])
        return Stored(deletion, created=True)


def stores_early(sessionmaker: async_sessionmaker[AsyncSession], partitions: int) -> bool:
    """Whether a deletion of ``partitions`` is worth an ``EarlyInsert``: PostgreSQL, at least
    ``EARLY_MIN_PARTITIONS``."""
    return partitions >= EARLY_MIN_PARTITIONS and sessionmaker.kw["bind"].dialect.name == "postgresql"
