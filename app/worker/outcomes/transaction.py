"""The write transaction of a write-back: one per write (``app.worker.outcomes.writer`` writes a sent
group's answers as they arrive), fenced per row, audited in the same transaction.

In order, inside one write transaction: lock the deletions it rolls up (id order), write every row this
worker still holds with the fence it claimed (one statement on PostgreSQL, one executemany on SQLite),
roll each deletion's status up from per-status counts (one query for all, one UPDATE per status reached,
so a batch of many small deletions costs the same statements as one), write the webhook outbox rows of
the deletions that ended (``app.services.webhooks.outbox``), then append one
``deletion.partition_failed`` event per failed partition and, for each deletion that became terminal, a
``deletion.completed`` event listing every partition's outcome (``app.worker.outcomes.events``), all in
one append (one statement on PostgreSQL). The events come last because appending locks the audit head
until commit. A stale worker's rows are skipped and counted, never written.

When the group's writes wrote every partition of a completed deletion (a deletion sent in one batch),
the summary is built from what was written instead of read back (:func:`_written_outcomes`).
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories import claims as repo
from app.adapters.db.repositories.claims import Claim, PartitionUpdate
from app.adapters.db.session import is_sqlite, write_transaction
from app.audit import NewEvent, append_events, rendered
from app.domain.deletions import DeletionStatus, PartitionStatus, overall_status
from app.services.webhooks.outbox import ended_events, enqueue_events
from app.worker.outcomes.earlier import Earlier
from app.worker.outcomes.events import completion_event, failure_events, rendered_completion
from app.worker.outcomes.summary import OutcomeSummary

Written = TypeVar("Written")
Made = TypeVar("Made")

TERMINAL_DELETION = frozenset(
    {
        DeletionStatus.SUCCEEDED,
        DeletionStatus.PARTIALLY_FAILED,
        DeletionStatus.FAILED,
        DeletionStatus.CANCELLED,
    }
)


@dataclass
class ApplyResult:
    applied: Counter[PartitionStatus] = field(default_factory=Counter)
    written: set[int] = field(default_factory=set)
    stale: int = 0
    completed: list[str] = field(default_factory=list)


async def apply_updates(
    sessionmaker: async_sessionmaker[AsyncSession],
    *,
    owner: str,
    claims: Mapping[int, Claim],
    updates: Sequence[PartitionUpdate],
    now: datetime,
    earlier: Earlier = Earlier(),
    open_deletions: Collection[str] = (),
    summary: OutcomeSummary | None = None,
) -> ApplyResult:
    """Write ``updates`` (the rows still held with their fence) and audit them. ``open_deletions``, whose
    rows are partly still being sent, are not rolled up; ``earlier``: the rows of ``claims`` written
    before with a terminal status, known to the roll-up and the completion summary without reading them
    back, and the writes still under way that it waits for before it rolls up (on PostgreSQL after this
    write's own UPDATE, its summaries made as if those writes write every row; on SQLite, whose one
    write lock they need, before it starts). ``summary``: a completion summary made ahead for the
    deletion ``claims`` are partitions of, used if this write completes it having written them all; its
    outcome columns are rendered in a thread while the database runs this write's UPDATE (at 10,000
    partitions about 13 ms of CPU that would otherwise follow the UPDATE on the event loop, on the way
    from the last leader's answer to the deletion's completion)."""
    result = ApplyResult()
    samples = {claim.deletion_id: claim for claim in claims.values()}
    if is_sqlite(sessionmaker.kw["bind"]):
        await earlier.ended()
    async with write_transaction(sessionmaker) as session:
        deletions = sorted({claims[u.id].deletion_id for u in updates})
        # Only the deletions rolled up here are locked: writes of rows of open deletions run side by side.
        rolled = [d for d in deletions if d not in open_deletions]
        before = await repo.lock_deletions(session, rolled) if rolled else {}
        # As if every row is written, by this write and by the ones under way.
        made = partial(_ahead, updates, earlier.expected(), claims, samples, before, open_deletions, owner)
        write = repo.write_updates(session, updates, deletions=deletions, owner=owner, now=now)
        written, (known, ahead) = await _beside(write, partial(made, summary), in_thread=summary is not None)
        await earlier.ended()  # the roll-up counts on their rows
        fresh = [u for u in updates if u.id in written]
        if len(fresh) < len(updates) or not earlier.all_written():
            # Rows lost to another claim, or left unwritten by a write that was under way: what was
            # assumed ahead is wrong.
            ahead, known = {}, _known(fresh, earlier.settled(), claims, before, open_deletions)
        result.written, result.stale = written, len(updates) - len(fresh)
        result.applied.update(u.status for u in fresh)
        completed = await _roll_up(session, known.deletion_ids, before, known.counts, now)
        rest = {d: completion for d, completion in completed.items() if d not in ahead}
        outcomes = await _outcomes(session, rest, known.rows, claims, owner)
        events = failure_events(fresh, claims, owner)
        for deletion_id, (status, counts) in completed.items():
            event = ahead.get(deletion_id)
            if event is None:
                event = completion_event(samples[deletion_id], status, counts, outcomes[deletion_id], owner)
            events.append(event)
            result.completed.append(deletion_id)
        clusters = {deletion_id: samples[deletion_id].cluster for deletion_id in completed}
        await enqueue_events(session, ended_events(completed, clusters), now)
        # Appending locks the audit head until commit, which every other appender (each accepted request)
        # waits for: append last, after all other statements, all events in one statement.
        await append_events(session, events)
    return result


def _ahead(
    updates: Sequence[PartitionUpdate],
    expected: Sequence[PartitionUpdate],
    claims: Mapping[int, Claim],
    samples: Mapping[str, Claim],
    locked: Mapping[str, repo.LockedDeletion],
    open_deletions: Collection[str],
    owner: str,
    summary: OutcomeSummary | None,
) -> tuple[_Known, dict[str, NewEvent]]:
    """What the roll-up knows and the completion events, as if ``updates`` and ``expected`` are written."""
    known = _known(updates, expected, claims, locked, open_deletions)
    return known, _completions_ahead(known, claims, samples, locked, owner, summary)


async def _beside(
    write: Awaitable[Written], make: Callable[[], Made], *, in_thread: bool
) -> tuple[Written, Made]:
    """``write``'s result and ``make()``'s: made in a thread while the database runs ``write`` when
    ``in_thread`` (a large deletion's summary), else on the event loop after it."""
    if not in_thread:
        return await write, make()
    making = asyncio.ensure_future(asyncio.to_thread(make))
    try:
        written = await write
    finally:
        made = await making
    return written, made


@dataclass(frozen=True)
class _Known:
    """What a write knows of the deletions it rolls up."""

    deletion_ids: list[str]  # the deletions to roll up: written to, none of their rows still being sent
    rows: list[PartitionUpdate]  # their rows written here, and those written before with a terminal status
    counts: dict[str, dict[PartitionStatus, int]]  # per-status counts of those whose every row is in rows


def _known(
    written: Sequence[PartitionUpdate],
    earlier: Sequence[PartitionUpdate],
    claims: Mapping[int, Claim],
    locked: Mapping[str, repo.LockedDeletion],
    open_deletions: Collection[str],
) -> _Known:
    deletion_ids = sorted({claims[u.id].deletion_id for u in written} - set(open_deletions))
    rolled = set(deletion_ids)
    rows = [u for u in (*earlier, *written) if claims[u.id].deletion_id in rolled]
    return _Known(deletion_ids, rows, _wholly_written_counts(rows, claims, locked))


def _completions_ahead(
    known: _Known,
    claims: Mapping[int, Claim],
    samples: Mapping[str, Claim],
    locked: Mapping[str, repo.LockedDeletion],
    owner: str,
    summary: OutcomeSummary | None,
) -> dict[str, NewEvent]:
    """The completion events, details rendered, of the deletions whose every row is ``known`` and that
    become terminal: what ``apply_updates`` appends for them when the write writes every row."""
    completed: dict[str, tuple[DeletionStatus, dict[PartitionStatus, int]]] = {}
    for deletion_id, counts in known.counts.items():
        status = overall_status(Counter(counts).elements())
        if _completes(status, locked[deletion_id].status):
            completed[deletion_id] = (status, counts)
    events: dict[str, NewEvent] = {}
    if summary is not None and summary.deletion_id in completed:
        made = summary.outcomes(known.rows)  # the summary's deletion is the only one of its group
        if made is not None:
            status, counts = completed.pop(summary.deletion_id)
            events[summary.deletion_id] = rendered_completion(
                samples[summary.deletion_id], status, counts, made, owner
            )
    outcomes = _written_outcomes(completed, known.rows, claims, owner)
    for deletion_id, (status, counts) in completed.items():
        if deletion_id in outcomes:
            events[deletion_id] = rendered(
                completion_event(samples[deletion_id], status, counts, outcomes[deletion_id], owner)
            )
    return events


async def _outcomes(
    session: AsyncSession,
    completed: Mapping[str, tuple[DeletionStatus, Mapping[PartitionStatus, int]]],
    fresh: Sequence[PartitionUpdate],
    claims: Mapping[int, Claim],
    owner: str,
) -> dict[str, dict[str, list[Any]]]:
    """The completion summaries of ``completed``: built from what was written where this transaction
    wrote every partition of the deletion, read back for the others."""
    outcomes = _written_outcomes(completed, fresh, claims, owner)
    if unknown := [deletion_id for deletion_id in completed if deletion_id not in outcomes]:
        outcomes.update(await repo.partition_outcomes(session, unknown))
    return outcomes


def _written_outcomes(
    completed: Mapping[str, tuple[DeletionStatus, Mapping[PartitionStatus, int]]],
    fresh: Sequence[PartitionUpdate],
    claims: Mapping[int, Claim],
    owner: str,
) -> dict[str, dict[str, list[Any]]]:
    """The completion summaries (``repo.partition_outcomes``) of the completed deletions whose every
    partition this transaction wrote, built from what was written instead of read back.

    Such a row holds its claim's topic, partition, offset, attempts and fence (the write matched that
    fence, and only a new claim changes them), ``owner`` as its lease owner and the update's status and
    error code; its offsets are the update's unless the update has none: then the row keeps its older
    ones, none on a partition's first attempt, read back otherwise. All of a deletion's rows were
    written here when the rows written for it are as many as its partitions counted after the write
    (under the deletion's lock)."""
    written: dict[str, list[PartitionUpdate]] = defaultdict(list)
    for update in fresh:
        written[claims[update.id].deletion_id].append(update)
    outcomes: dict[str, dict[str, list[Any]]] = {}
    for deletion_id, (_, counts) in completed.items():
        rows = written.get(deletion_id, [])
        if not rows or len(rows) != sum(counts.values()):
            continue
        columns = OutcomeSummary([claims[u.id] for u in rows], owner).columns(rows)
        if columns is not None:
            outcomes[deletion_id] = columns
    return outcomes


def _wholly_written_counts(
    fresh: Sequence[PartitionUpdate], claims: Mapping[int, Claim], locked: Mapping[str, repo.LockedDeletion]
) -> dict[str, dict[PartitionStatus, int]]:
    """Per-status counts of the deletions whose every partition row ``fresh`` wrote (as many distinct
    rows written as the deletion has): known without counting its rows again."""
    written: dict[str, Counter[PartitionStatus]] = defaultdict(Counter)
    for update in fresh:
        written[claims[update.id].deletion_id][update.status] += 1
    return {
        deletion_id: dict(counts)
        for deletion_id, counts in written.items()
        if counts.total() == locked[deletion_id].partition_count
    }


async def _roll_up(
    session: AsyncSession,
    deletion_ids: Sequence[str],
    previous: Mapping[str, repo.LockedDeletion],
    known: Mapping[str, dict[PartitionStatus, int]],
    now: datetime,
) -> dict[str, tuple[DeletionStatus, dict[PartitionStatus, int]]]:
    """Recompute each deletion's status (counting the rows of those not in ``known``); those that just
    became terminal, with their counts."""
    completed: dict[str, tuple[DeletionStatus, dict[PartitionStatus, int]]] = {}
    moves: dict[DeletionStatus, list[str]] = defaultdict(list)
    unknown = [deletion_id for deletion_id in deletion_ids if deletion_id not in known]
    all_counts = {**(await repo.status_counts(session, unknown) if unknown else {}), **known}
    for deletion_id in deletion_ids:
        counts = all_counts[deletion_id]
        status = overall_status(Counter(counts).elements())
        was = previous[deletion_id].status
        if status.value == was:
            continue
        moves[status].append(deletion_id)
        if _completes(status, was):
            completed[deletion_id] = (status, counts)
    # One statement per status reached: a batch of small deletions mostly reaches one.
    for status, moved in moves.items():
        finished = status in TERMINAL_DELETION
        await repo.set_deletion_status(session, moved, status.value, now=now, finished=finished)
    return completed


def _completes(status: DeletionStatus, was: str) -> bool:
    """Whether a deletion that was ``was`` becomes terminal with ``status`` (its completion is audited)."""
    return status in TERMINAL_DELETION and DeletionStatus(was) not in TERMINAL_DELETION
