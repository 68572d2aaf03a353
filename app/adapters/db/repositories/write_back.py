"""Writing outcomes back: each row guarded by the fence it was claimed with (its lease given back), the
deletions they belong to locked and rolled up from their partitions' counts, and the completion
summary read back.

PostgreSQL: one ``UPDATE ... FROM unnest(arrays) ... RETURNING id`` for the whole batch, so 10,000 rows
are one statement and the returned ids (one array) are exactly the rows still held with that fence.
Each array is bound as one text parameter in PostgreSQL's array syntax and cast in SQL: asyncpg encodes
a Python list element by element, with two abstract-class checks per element, 16 ms of CPU for the eight
lists of a 10,000-row batch; the texts take 4 ms to build and bind. Next attempt times travel as
microseconds since the epoch.

The rows are also named by their deletions, so that the planner reads just those deletions' rows through
the ``(deletion_id, topic, partition)`` index: matched on ids alone, it hashes a scan of the whole table
once the table holds a few times more rows than the batch (80 ms at 600,000 rows, growing with history).

SQLite (one writer at a time under BEGIN IMMEDIATE): read the fences still held, then one executemany.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from itertools import groupby
from operator import itemgetter
from typing import Any, NamedTuple

from sqlalchemy import BigInteger, String, any_, bindparam, func, select, text, update
from sqlalchemy.dialects.postgresql import ARRAY, TIMESTAMP
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from app.adapters.db.models import DELETIONS, PD, Deletion
from app.domain.deletion_requests import DeletionStatus, PartitionStatus

# SQLite allows 32,766 bound variables per statement; stay well below it.
CHUNK = 5_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


class PartitionUpdate(NamedTuple):
    """The state a worker writes back for one claimed row (applied only if ``fence`` is still current)."""

    id: int
    fence: int
    status: PartitionStatus
    low_watermark: int | None
    leader_log_start_offset: int | None
    error_code: str | None
    error_message: str | None
    next_attempt_at: datetime


POSTGRESQL_UPDATE = text(
    """
    WITH written AS (
    UPDATE partition_deletion AS pd SET
        status = v.status,
        low_watermark = COALESCE(v.low_watermark, pd.low_watermark),
        leader_log_start_offset = COALESCE(v.llso, pd.leader_log_start_offset),
        error_code = v.error_code,
        error_message = v.error_message,
        next_attempt_at = TIMESTAMPTZ 'epoch' + v.next_us * INTERVAL '1 microsecond',
        lease_expires_at = NULL,
        updated_at = :now
    FROM unnest(
            CAST(CAST(:ids AS text) AS bigint[]), CAST(CAST(:fences AS text) AS bigint[]),
            CAST(CAST(:statuses AS text) AS text[]), CAST(CAST(:lws AS text) AS bigint[]),
            CAST(CAST(:llsos AS text) AS bigint[]), CAST(CAST(:codes AS text) AS text[]),
            CAST(CAST(:messages AS text) AS text[]), CAST(CAST(:nexts AS text) AS bigint[])
        ) AS v(id, fence, status, low_watermark, llso, error_code, error_message, next_us)
    WHERE pd.id = v.id AND pd.fence = v.fence
        AND pd.deletion_id = ANY(CAST(CAST(:deletions AS text) AS text[]))
        AND pd.lease_owner = :owner AND pd.lease_expires_at IS NOT NULL
    RETURNING pd.id
    )
    SELECT array_agg(id) FROM written
    """
).bindparams(bindparam("now", type_=TIMESTAMP(timezone=True)))


async def write_updates(
    session: AsyncSession,
    updates: Sequence[PartitionUpdate],
    *,
    deletions: Sequence[str],
    owner: str,
    now: datetime,
) -> set[int]:
    """Apply ``updates`` (rows of ``deletions``) whose row ``owner`` still holds with the same fence; the
    ids written."""
    if not updates:
        return set()
    if is_postgresql(session):
        params = postgresql_update_params(updates, deletions=deletions, owner=owner, now=now)
        return set((await session.execute(POSTGRESQL_UPDATE, params)).scalar_one() or ())
    fences = await _held_fences(session, owner=owner, ids=[u.id for u in updates])
    fresh = [u for u in updates if fences.get(u.id) == u.fence]
    await _write_many(session, fresh, now=now)
    return {u.id for u in fresh}


def postgresql_update_params(
    updates: Sequence[PartitionUpdate], *, deletions: Sequence[str], owner: str, now: datetime
) -> dict[str, object]:
    """The parameters of ``POSTGRESQL_UPDATE`` for ``updates``."""
    # PartitionUpdate is a named tuple: one transposition gives each column.
    ids, fences, statuses, lws, llsos, codes, messages, nexts = zip(*updates, strict=True)
    # A batch has few distinct next attempt times (its outcomes were decided at one moment).
    microseconds = {moment: (moment - EPOCH) // MICROSECOND for moment in set(nexts)}
    return {
        "now": now,
        "owner": owner,
        "deletions": array_literal(deletions, quote=True),
        "ids": array_literal(ids),
        "fences": array_literal(fences),
        # PartitionStatus is a StrEnum: its members are the texts.
        "statuses": array_literal(statuses, quote=True),
        "lws": array_literal(lws),
        "llsos": array_literal(llsos),
        "codes": array_literal(codes, quote=True),
        "messages": array_literal(messages, quote=True),
        "nexts": array_literal([microseconds[moment] for moment in nexts]),
    }


def is_postgresql(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def any_of(column: ColumnElement[str], values: Iterable[str], postgresql: bool) -> ColumnElement[bool]:
    """``column IN values``; on PostgreSQL ``column = ANY(:array)``: one statement text whatever the number
    of values, so asyncpg prepares it once (an IN list renders one parameter per value, a new statement
    for each batch size)."""
    ordered = sorted(values)
    if postgresql:
        return column == any_(bindparam(f"{column.key}_values", ordered, type_=ARRAY(String)))
    return column.in_(ordered)


def array_literal(values: Sequence[object], *, quote: bool = False) -> str:
    """``values`` as a PostgreSQL array literal, None as NULL; with ``quote`` each text is quoted,
    backslash and quote escaped (the only characters special inside quotes). Each distinct value is
    rendered once: a batch repeats its few statuses, topics and deletion ids."""
    if not quote and None not in values:
        return "{" + ",".join(map(str, values)) + "}"
    rendered = {
        value: '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"' if quote else str(value)
        for value in set(values)
        if value is not None
    }
    return "{" + ",".join(["NULL" if value is None else rendered[value] for value in values]) + "}"


async def _held_fences(session: AsyncSession, *, owner: str, ids: Sequence[int]) -> dict[int, int]:
    fences: dict[int, int] = {}
    ordered = sorted(ids)
    for start in range(0, len(ordered), CHUNK):
        stmt = select(PD.c.id, PD.c.fence).where(
            PD.c.id.in_(ordered[start : start + CHUNK]),
            PD.c.lease_owner == owner,
            PD.c.lease_expires_at.is_not(None),
        )
        fences.update({row.id: row.fence for row in (await session.execute(stmt)).all()})
    return fences


async def _write_many(session: AsyncSession, updates: Sequence[PartitionUpdate], *, now: datetime) -> None:
    if not updates:
        return
    stmt = (
        update(PD)
        .where(PD.c.id == bindparam("b_id"), PD.c.fence == bindparam("b_fence"))
        .values(
            status=bindparam("b_status"),
            # An answer without offsets (an error) keeps the last ones known: both only ever grow.
            low_watermark=func.coalesce(bindparam("b_low_watermark", type_=BigInteger), PD.c.low_watermark),
            leader_log_start_offset=func.coalesce(
                bindparam("b_llso", type_=BigInteger), PD.c.leader_log_start_offset
            ),
            error_code=bindparam("b_error_code"),
            error_message=bindparam("b_error_message"),
            next_attempt_at=bindparam("b_next_attempt_at"),
            lease_expires_at=None,
            updated_at=now,
        )
    )
    params = [
        {
            "b_id": u.id,
            "b_fence": u.fence,
            "b_status": u.status.value,
            "b_low_watermark": u.low_watermark,
            "b_llso": u.leader_log_start_offset,
            "b_error_code": u.error_code,
            "b_error_message": u.error_message,
            "b_next_attempt_at": u.next_attempt_at,
        }
        for u in updates
    ]
    await session.execute(stmt, params)


async def lock_deletions(session: AsyncSession, deletion_ids: Sequence[str]) -> dict[str, str]:
    """Lock the deletions (id order, so two workers never deadlock) and return their statuses.

    Rolling a deletion's status up from its partitions must see every other worker's committed writes:
    holding the deletion row serializes the roll-ups of one deletion (SQLite: BEGIN IMMEDIATE does)."""
    stmt = (
        select(Deletion.id, Deletion.status)
        .where(any_of(DELETIONS.c.id, deletion_ids, is_postgresql(session)))
        .order_by(Deletion.id)
    )
    if is_postgresql(session):
        stmt = stmt.with_for_update()
    return {row.id: row.status for row in (await session.execute(stmt)).all()}


async def status_counts(
    session: AsyncSession, deletion_ids: Sequence[str]
) -> dict[str, dict[PartitionStatus, int]]:
    """Per deletion, how many of its partitions are in each status (one query for all of them)."""
    stmt = (
        select(PD.c.deletion_id, PD.c.status, func.count())
        .where(any_of(PD.c.deletion_id, deletion_ids, is_postgresql(session)))
        .group_by(PD.c.deletion_id, PD.c.status)
    )
    counts: dict[str, dict[PartitionStatus, int]] = {deletion_id: {} for deletion_id in deletion_ids}
    for deletion_id, status, count in (await session.execute(stmt)).all():
        counts[deletion_id][PartitionStatus(status)] = count
    return counts


async def set_deletion_status(
    session: AsyncSession, deletion_ids: Sequence[str], status: str, *, now: datetime, finished: bool
) -> None:
    """Move ``deletion_ids`` to ``status`` (one statement, however many deletions share it)."""
    await session.execute(
        update(Deletion)
        .where(any_of(DELETIONS.c.id, deletion_ids, is_postgresql(session)))
        .values(status=status, updated_at=now, finished_at=now if finished else None)
        .execution_options(synchronize_session=False)
    )


OUTCOME_COLUMNS = (
    PD.c.topic,
    PD.c.partition,
    PD.c.resolved_offset,
    PD.c.status,
    PD.c.low_watermark,
    PD.c.leader_log_start_offset,
    PD.c.error_code,
    PD.c.attempts,
    PD.c.fence,
    PD.c.lease_owner.label("worker"),
)
OUTCOME_KEYS = tuple(column.key for column in OUTCOME_COLUMNS)


async def partition_outcomes(
    session: AsyncSession, deletion_ids: Sequence[str]
) -> dict[str, dict[str, list[Any]]]:
    """Every partition's outcome per deletion, for the completion summaries (one query for all), column
    by column (``OUTCOME_COLUMNS``' keys), each in (topic, partition) order: the i-th entries of the
    lists are one partition. Columns keep a 10,000-partition summary cheap to encode and hash."""
    postgresql = is_postgresql(session)
    # Topics in code point order on both databases (SQLite's BINARY collation is), whatever the PostgreSQL
    # database's collation: a summary reads the same whichever database stored it.
    topic = PD.c.topic.collate("C") if postgresql else PD.c.topic
    stmt = (
        select(PD.c.deletion_id, *OUTCOME_COLUMNS)
        .where(any_of(PD.c.deletion_id, deletion_ids, postgresql))
        .order_by(PD.c.deletion_id, topic, PD.c.partition)
    )
    rows = (await session.execute(stmt)).all()
    outcomes: dict[str, dict[str, list[Any]]] = {d: {key: [] for key in OUTCOME_KEYS} for d in deletion_ids}
    for deletion_id, group in groupby(rows, key=itemgetter(0)):
        columns = list(zip(*group, strict=True))[1:]
        outcomes[deletion_id] = {key: list(values) for key, values in zip(OUTCOME_KEYS, columns, strict=True)}
    return outcomes


async def mark_started(session: AsyncSession, deletion_ids: Sequence[str], *, now: datetime) -> None:
    """pending (or approved) -> in_progress for deletions whose partitions were just claimed, in a short
    transaction of its own beside the sends: a batch the storing transaction handed over has no claim
    transaction to join, and the first write-back rolls the status up anyway."""
    await session.execute(
        update(Deletion)
        .where(
            any_of(DELETIONS.c.id, deletion_ids, is_postgresql(session)),
            Deletion.status.in_((DeletionStatus.PENDING.value, DeletionStatus.APPROVED.value)),
        )
        .values(status=DeletionStatus.IN_PROGRESS.value, updated_at=now)
        .execution_options(synchronize_session=False)
    )
