"""Group commit of accepted deletions: one write transaction stores every request ready at the time.

Each accepted request costs a write transaction, and its ``deletion.requested`` event holds the audit
head's lock until that transaction commits, so concurrent requests queue on the lock one commit at a
time. Instead a request whose checks and planning are done hands its deletion to this instance's
``AcceptBatcher`` and waits. The batcher stores all that is waiting in ONE transaction: the
idempotency keys checked in one query, the approval rules of the requests' clusters read once (a
request a rule protects is not stored but handed back, to be held for approval), every deletion and its
partitions, their webhook outbox rows (``app.services.webhooks.outbox``), all ``deletion.requested``
events in one append (in the order the requests arrived), and one executor lease for the lot
(``app.services.deletions.handoff``: after the commit the executor works their claimed partitions as
one batch). Then each request gets its answer.
While a transaction runs, new requests wait for the next one: at low load a request is stored alone and
at once (no timer), under load one commit serves many.

Every guarantee of a transaction of its own holds: a deletion and its audit event commit together, a
request is answered only once its deletion is durable, nothing is accepted partially. An Idempotency-Key
already stored, or taken by an earlier request of the same transaction, answers with that deletion. If
the shared transaction fails (a key taken meanwhile by another instance, any database error), each of
its requests is stored again in a transaction of its own, so one bad request never fails the others
(with the same deletion id: a shared transaction cut while committing that did commit makes the second
insert a duplicate key, and ``app.services.deletions.submission`` answers with the deletion stored).
Each request learns whether its deletion's transaction reached COMMIT (``app.adapters.db.faults``):
a request cut before it may run again, one cut after it may not.
A transaction holds at most ``max_partitions`` partitions (one executor batch); a larger deletion is
stored alone.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import logging
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.faults import note_commit, recorded_commits
from app.adapters.db.models import Deletion
from app.adapters.db.repositories import deletions as repo
from app.adapters.db.session import write_transaction
from app.audit import NewEvent, append_events
from app.domain.approvals import Requirement
from app.domain.executor import ExecutorPort
from app.metrics import accept_transactions_total
from app.services.approvals.protection import RuleBook
from app.services.deletions.handoff import handoff_to
from app.services.webhooks.outbox import accepted_events, enqueue_events

log = logging.getLogger("kafka_purge.api")


@dataclass(frozen=True)
class Accepted:
    """A deletion ready to store: the row (its times are set when stored), its planned partitions and its
    ``deletion.requested`` event (``occurred_at`` is set when stored)."""

    deletion: Deletion
    planned: Sequence[repo.PlannedPartition]
    event: NewEvent
    # A caller's request, held for approval when a rule protects its topics (read in the storing
    # transaction, so the check costs one query per transaction instead of one per request).
    gated: bool = False

    @property
    def key(self) -> tuple[str, str] | None:
        return key_of(self.deletion)


def key_of(deletion: Deletion) -> tuple[str, str] | None:
    """The deletion's Idempotency-Key with its principal (keys are scoped to the caller)."""
    key = deletion.idempotency_key
    return None if key is None else (deletion.principal, key)


@dataclass(frozen=True)
class Stored:
    """What storing answered: ``created``, the deletion already stored under the same key, or (``held``)
    nothing stored because an approval rule protects the deletion's topics."""

    deletion: Deletion
    created: bool
    held: Requirement | None = None


Waiting = tuple[Accepted, "asyncio.Future[Stored]"]


class AcceptBatcher:
    """This instance's queue of deletions ready to store, stored one transaction per turn."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        executor: ExecutorPort | None,
        *,
        max_partitions: int,
    ) -> None:
        self._sessionmaker = sessionmaker
        self._executor = executor
        self._max_partitions = max_partitions
        self._waiting: deque[Waiting] = deque()
        self._task: asyncio.Task[None] | None = None
        # Requests whose own transaction failed after reaching COMMIT: their outcome is unknown.
        self._committing: set[asyncio.Future[Stored]] = set()

    async def store(self, accepted: Accepted) -> Stored:
        """Store ``accepted`` with whatever else is waiting; returns once it is committed."""
        future: asyncio.Future[Stored] = asyncio.get_running_loop().create_future()
        self._waiting.append((accepted, future))
        if self._task is None or self._task.done():
            # A context of its own: the batcher serves every request, not the one that started it.
            self._task = asyncio.create_task(
                self._run(), name="accept batcher", context=contextvars.Context()
            )
        try:
            stored = await future
        except Exception:
            if future in self._committing:
                self._committing.discard(future)
                note_commit()
            raise
        note_commit()
        return stored

    async def close(self) -> None:
        """Wait for the transaction under way (requests still waiting hold the server open anyway)."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        batch: list[Waiting] = []
        try:
            while self._waiting:
                batch = self._next_batch()
                if batch:
                    await self._store_batch(batch)
        except BaseException:  # cancelled at shutdown: nobody waits for an answer forever
            for _, future in (*batch, *self._waiting):
                future.cancel()
            self._waiting.clear()
            raise

    def _next_batch(self) -> list[Waiting]:
        """The oldest waiting requests, up to ``max_partitions`` partitions (at least one request);
        requests whose caller went away before their turn are dropped, never stored."""
        batch: list[Waiting] = []
        partitions = 0
        while self._waiting:
            accepted, future = self._waiting[0]
            if future.done():
                self._waiting.popleft()
                continue
            if batch and partitions + len(accepted.planned) > self._max_partitions:
                break
            batch.append(self._waiting.popleft())
            partitions += len(accepted.planned)
        return batch

    async def _store_batch(self, batch: list[Waiting]) -> None:
        if len(batch) > 1:
            try:
                results = await self._store_together([accepted for accepted, _ in batch])
            except Exception:
                log.warning(
                    "storing %d deletions together failed; storing each alone", len(batch), exc_info=True
                )
            else:
                for (_, future), stored in zip(batch, results, strict=True):
                    _answer(future, stored)
                return
        for accepted, future in batch:
            with recorded_commits() as commits:
                try:
                    [stored] = await self._store_together([accepted])
                except Exception as exc:
                    if not future.done():
                        if commits.reached:
                            self._committing.add(future)
                        future.set_exception(exc)
                else:
                    _answer(future, stored)

    async def _store_together(self, batch: Sequence[Accepted]) -> list[Stored]:
        """One write transaction for ``batch``; each one's result, in order."""
        now = datetime.now(UTC)
        results: list[Stored] = []
        new: list[Accepted] = []
        async with handoff_to(self._executor) as handoff, write_transaction(self._sessionmaker) as session:
            keys = [accepted.key for accepted in batch if accepted.key is not None]
            taken = await repo.find_by_idempotency_keys(session, keys)
            rules = RuleBook(session)
            for accepted in batch:
                key = accepted.key
                if key is not None and (earlier := taken.get(key)) is not None:
                    results.append(Stored(earlier, created=False))
                    continue
                deletion = accepted.deletion
                if accepted.gated and (need := await rules.requirement(deletion.cluster, deletion.topics)):
                    results.append(Stored(deletion, created=False, held=need))
                    continue
                # One time for the whole transaction: the handed-off rows share one deadline, so the
                # executor sends them in one call per leader.
                deletion.created_at = deletion.updated_at = now
                if key is not None:
                    taken[key] = deletion
                new.append(accepted)
                results.append(Stored(deletion, created=True))
            await handoff.create_deletions(session, [(a.deletion, a.planned) for a in new])
            await enqueue_events(session, accepted_events([a.deletion for a in new]), now)
            # Last: appending locks the audit head until the commit.
            await append_events(session, [dataclasses.replace(a.event, occurred_at=now) for a in new])
        accept_transactions_total.inc()
        return results


def _answer(future: asyncio.Future[Stored], stored: Stored) -> None:
    if not future.done():  # the caller went away meanwhile; its deletion is stored all the same
        future.set_result(stored)
