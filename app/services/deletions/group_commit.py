"""Group commit of accepted deletions: every deletion is stored here, one write transaction for every
request ready at the time.

What it buys: each accepted request costs a write transaction, and its ``deletion.requested`` event holds
the audit head's lock until that transaction commits, so concurrent requests queue on the lock one commit
at a time; storing all that wait in one transaction takes small POSTs from about 109/s to about 900/s
(``bench/service_bench.py``).

A request whose checks and planning are done (``app.services.deletions.submission``) gives its deletion
to this instance's ``AcceptBatcher`` and waits. The batcher stores all that is waiting in ONE
transaction: the idempotency keys checked in one query, every deletion and its partitions, their webhook
outbox rows (``app.adapters.db.repositories.webhooks``), a protected deletion held for approval with the
preview its approvers approve (``app.services.approvals.transitions.hold_deletion``), every other
``deletion.requested`` event in one append (in the order the requests arrived), and one executor lease for
the lot (``LeasedInsert``: after the commit the executor works their claimed partitions as one batch).
Then each request gets its answer. While a transaction runs, new requests wait for the next one: at low
load a request is stored alone and at once (no timer), under load one commit serves many.

Every guarantee of a transaction of its own holds: a deletion and its audit events commit together, a
request is answered only once its deletion is durable, nothing is accepted partially. A request whose
Idempotency-Key is stored already, or taken by an earlier request of the same transaction, stores
nothing (``KeyTaken``). If a transaction fails (a key taken meanwhile by another instance, a COMMIT whose
outcome is unknown, any database error), each of its requests is stored again in a transaction of its
own, so one bad request never fails the others, and with the same deletion id: a transaction cut while
committing that did commit makes the second insert a duplicate key, which the submission answers with
the deletion stored. Each request learns whether its deletion's transaction reached COMMIT
(``app.adapters.db.faults``): a request cut before it may run again, one cut after it may not.
A transaction holds at most ``max_partitions`` partitions (one executor batch); a larger deletion is
stored alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import logging
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.faults import note_commit, recorded_commits
from app.adapters.db.models import Deletion
from app.adapters.db.repositories import deletions as repo
from app.adapters.db.repositories.webhooks import accepted_events, enqueue_events
from app.adapters.db.session import write_transaction
from app.audit import NewEvent, append_events
from app.audit.events import Actor
from app.domain.approvals import Requirement
from app.domain.ports import Claim, ExecutorPort, Lease, Requester
from app.metrics import accept_transactions_total
from app.services.approvals.transitions import hold_deletion

log = logging.getLogger("kafka_purge.api")


class KeyTaken(Exception):
    """The request's Idempotency-Key names a deletion stored already: nothing was stored for it."""


@dataclass(frozen=True)
class Hold:
    """What holding a protected deletion for approval stores with it: the approval it needs, the preview
    its approvers approve, and who asked."""

    need: Requirement
    preview: Mapping[str, Any]
    actor: Actor


@dataclass(frozen=True)
class Accepted:
    """A deletion ready to store: the row (its times are set when stored), its planned partitions, its
    ``deletion.requested`` event (``occurred_at`` is set when stored) and, for a deletion an approval
    rule protects, its ``hold``."""

    deletion: Deletion
    planned: Sequence[repo.PlannedPartition]
    event: NewEvent
    hold: Hold | None = None

    @property
    def key(self) -> tuple[str, str] | None:
        """The Idempotency-Key with its principal (keys are scoped to the caller)."""
        key = self.deletion.idempotency_key
        return None if key is None else (self.deletion.principal, key)


Waiting = tuple[Accepted, "asyncio.Future[None]"]


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
        # Requests whose transaction failed after reaching COMMIT: their outcome is unknown.
        self._committing: set[asyncio.Future[None]] = set()

    async def store(self, accepted: Accepted) -> None:
        """Store ``accepted`` with whatever else is waiting; returns once it is committed. ``KeyTaken``
        when its Idempotency-Key names a deletion stored already."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((accepted, future))
        if self._task is None or self._task.done():
            # A context of its own: the batcher serves every request, not the one that started it.
            self._task = asyncio.create_task(
                self._run(), name="accept batcher", context=contextvars.Context()
            )
        try:
            await future
        except Exception:
            if future in self._committing:
                self._committing.discard(future)
                note_commit()
            raise
        note_commit()

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
        with recorded_commits() as together:
            try:
                taken = await self._store_together([accepted for accepted, _ in batch])
            except Exception:
                log.warning("storing %d deletion(s) failed; storing each alone", len(batch), exc_info=True)
            else:
                for (_, future), key_taken in zip(batch, taken, strict=True):
                    _answer(future, KeyTaken() if key_taken else None)
                return
        for accepted, future in batch:
            with recorded_commits() as alone:
                try:
                    [key_taken] = await self._store_together([accepted])
                except Exception as exc:
                    if (together.reached or alone.reached) and not future.done():
                        self._committing.add(future)
                    _answer(future, exc)
                else:
                    _answer(future, KeyTaken() if key_taken else None)

    async def _store_together(self, batch: Sequence[Accepted]) -> list[bool]:
        """One write transaction for ``batch``; for each, in order, whether its key was taken."""
        now = datetime.now(UTC)
        taken_flags: list[bool] = []
        new: list[Accepted] = []
        held: list[tuple[Accepted, Hold]] = []
        async with leased_insert(self._executor) as insert, write_transaction(self._sessionmaker) as session:
            keys = [accepted.key for accepted in batch if accepted.key is not None]
            taken = await repo.find_by_idempotency_keys(session, keys)
            for accepted in batch:
                key = accepted.key
                taken_flags.append(key is not None and key in taken)
                if taken_flags[-1]:
                    continue
                # One time for the whole transaction: the claimed rows share one deadline, so the
                # executor sends them in one call per leader.
                accepted.deletion.created_at = accepted.deletion.updated_at = now
                if key is not None:
                    taken[key] = accepted.deletion
                if accepted.hold is None:
                    new.append(accepted)
                else:
                    held.append((accepted, accepted.hold))
            await insert.create_deletions(session, [(a.deletion, a.planned) for a in new])
            await enqueue_events(session, accepted_events([a.deletion for a in new]), now)
            for accepted, hold in held:
                stored = (accepted.deletion, accepted.planned)
                await hold_deletion(session, stored, accepted.event, hold.need, hold.preview, hold.actor)
            # Last: appending locks the audit head until the commit.
            await append_events(session, [dataclasses.replace(a.event, occurred_at=now) for a in new])
        accept_transactions_total.inc()
        return taken_flags


def _answer(future: asyncio.Future[None], outcome: BaseException | None) -> None:
    if future.done():  # the caller went away meanwhile; its deletion is stored all the same
        return
    if outcome is None:
        future.set_result(None)
    else:
        future.set_exception(outcome)


class LeasedInsert:
    """New deletions stored with their first ``claim_batch`` partitions claimed by this instance's
    executor, through ``app.domain.ports.ExecutorPort`` (``app.worker.executor.Executor``).

    Without it, the executor of the instance that accepted a deletion would wake up, claim the new rows in
    a transaction of its own (one UPDATE of every row, most of a second at 10,000 partitions) and only then
    send. Here the storing transaction inserts the first ``claim_batch`` partitions of all its deletions
    already claimed under one ``Lease`` (in_progress, fence 1, first attempt, lease and deadline from now:
    what ``claim_due`` would write), gets them back from the insert as claims, and once it committed the
    executor sends them at once, as one batch. Every guarantee of claiming holds:

    - another instance skips the rows while the lease runs, as any claimed row, and can only take them
      over with a claim of its own, which bumps the fence and so voids this instance's write-back;
    - a crash (or a stop) after the commit leaves them leased until the lease runs out, then any instance
      claims them and resends the same stored offsets; a rollback stores nothing and frees the batch slot;
    - instances without an executor (``serve --api-only``), or whose executor has no batch slot free,
      store pending rows and wake their executor; the rows beyond ``claim_batch`` stay pending for any
      instance to claim.
    """

    def __init__(self, executor: ExecutorPort | None) -> None:
        self._executor = executor
        self._lease: Lease | None = None
        self._claims: list[Claim] = []
        self._unclaimed = 0
        self._requesters: dict[str, Requester] = {}

    async def create_deletions(self, session: AsyncSession, new: Sequence[repo.NewDeletion]) -> None:
        """``deletions.create_deletions``, under one lease when the executor has room."""
        if not new:
            return
        if self._executor is not None:
            self._lease = self._executor.reserve()
        self._claims = await repo.create_deletions(session, new, lease=self._lease)
        self._unclaimed = sum(len(planned) for _, planned in new) - len(self._claims)
        self._requesters = {
            d.id: Requester(d.principal, tuple(d.principal_groups or ()), d.client_host) for d, _ in new
        }

    def committed(self) -> None:
        """The deletions are durable: the executor sends their claimed rows now and looks for the rest."""
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
async def leased_insert(executor: ExecutorPort | None) -> AsyncIterator[LeasedInsert]:
    """Around the transaction that stores new deletions (``LeasedInsert.create_deletions`` inside it): on a
    normal exit (committed) the executor takes them, on an exception the reservation is given back."""
    insert = LeasedInsert(executor)
    try:
        yield insert
    except BaseException:
        insert.rolled_back()
        raise
    insert.committed()
