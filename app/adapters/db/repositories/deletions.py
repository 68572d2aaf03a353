"""Queries on deletions and their partitions. Repositories flush; the caller commits."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import (
    Integer,
    String,
    Text,
    bindparam,
    insert,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, TIMESTAMP
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session
from sqlalchemy.types import TypeDecorator

from app.adapters.db.models import DELETIONS, PD, Deletion
from app.adapters.db.repositories.write_back import array_literal
from app.domain.deletion_requests import PartitionStatus
from app.domain.ports import Claim, Lease, TopicPartition


def _array_item(column_type: Any) -> Any:
    """The type of an array of ``column_type`` values: plain timestamps for ``UtcDateTime`` (the
    deletions' times are aware UTC already)."""
    return TIMESTAMP(timezone=True) if isinstance(column_type, TypeDecorator) else column_type


class PlannedPartition(NamedTuple):
    """One partition of a new deletion: the offset asked for and the concrete offset to send. A named
    tuple: a deletion has up to 10,000 of them, built in C."""

    partition: TopicPartition
    requested_offset: int
    resolved_offset: int
    spec: dict[str, object] | None = None


def read_stored(
    session: Session, principal: str, key: str | None, deletion_id: str | None = None
) -> tuple[bool, Deletion | None]:
    """For a synchronous read (``app.adapters.db.session.run_read``): whether the deletion
    ``deletion_id`` is stored, and the deletion ``principal`` stored under Idempotency-Key ``key``."""
    stored = deletion_id is not None and session.get(Deletion, deletion_id) is not None
    if key is None:
        return stored, None
    query = select(Deletion).where(Deletion.principal == principal, Deletion.idempotency_key == key)
    return stored, session.execute(query).scalar_one_or_none()


async def find_by_idempotency_keys(
    session: AsyncSession, keys: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], Deletion]:
    """The deletions stored under any of ``keys`` (principal, Idempotency-Key), in one query."""
    if not keys:
        return {}
    query = select(Deletion).where(
        Deletion.idempotency_key.in_(sorted({key for _, key in keys})),
        Deletion.principal.in_(sorted({principal for principal, _ in keys})),
    )
    wanted = set(keys)
    found = {(d.principal, d.idempotency_key or ""): d for d in (await session.execute(query)).scalars()}
    return {key: deletion for key, deletion in found.items() if key in wanted}


DELETION_COLUMNS = tuple(column.key for column in DELETIONS.columns)
JSON_COLUMNS = ("topics", "principal_groups")
# Statements are built once, so each execution is a compiled-cache hit, and run on the session's
# connection (Core): no unit of work or ORM bulk bookkeeping, the deletions stay transient objects.
INSERT_DELETION = insert(DELETIONS)
INSERT_TASKS = insert(PD)
# PostgreSQL: the deletions and all their partitions in one statement and one round trip, whatever their
# number (10,000 partitions are six arrays; the deletions one array per column, ``d`` a deletion's
# position in them, each task naming its deletion's id from there). A task starts pending, unclaimed,
# due now (the executor sets ``deadline_at`` when it first claims it, so the timeout counts from the
# first send), except the first ``:claimed`` tasks of all, inserted already claimed with a ``Lease``
# (``app.services.deletions.group_commit``) and their deletion's deadline. Those come back as five
# arrays: ids, deletion ids, topics, partitions and offsets (one row, the arrays in one order; NULLs
# without a lease). They are sorted by id in Python: in SQL that is five sorts of up to 10,000 rows,
# here one pass over rows that in practice come in id order. Every deletion column is bound: one
# missing from the text fails at import.
# The task columns are bound as array texts (``write_back.array_literal``, as the write-back binds its
# columns) and cast in SQL: asyncpg would encode the six lists element by element.
TASK_ARRAYS = (
    "task_deletion",
    "task_topics",
    "task_partitions",
    "task_requested",
    "task_resolved",
    "task_specs",
)
_POSTGRESQL_INSERT = text(
    """
    WITH d AS (
        SELECT * FROM unnest(:id, :cluster, :principal, :client_host, :request_id, :reason, :leader_only,
            :timeout_ms, :status, :partition_count, :topics, :principal_groups, :idempotency_key,
            :request_hash, :created_at, :updated_at, :finished_at, :claimed_deadline)
        WITH ORDINALITY AS d(id, cluster, principal, client_host, request_id, reason, leader_only,
            timeout_ms, status, partition_count, topics, principal_groups, idempotency_key, request_hash,
            created_at, updated_at, finished_at, claimed_deadline, d)
    ),
    new_deletion AS (
        INSERT INTO deletion (id, cluster, principal, client_host, request_id, reason, leader_only,
            timeout_ms, status, partition_count, topics, principal_groups, idempotency_key, request_hash,
            created_at, updated_at, finished_at)
        SELECT id, cluster, principal, client_host, request_id, reason, leader_only, timeout_ms, status,
            partition_count, topics::json, principal_groups::json, idempotency_key, request_hash,
            created_at, updated_at, finished_at
        FROM d ORDER BY d
    ),
    tasks AS (
        INSERT INTO partition_deletion (deletion_id, topic, partition, requested_offset, resolved_offset,
            spec, status, attempts, fence, lease_owner, lease_expires_at, next_attempt_at, deadline_at,
            updated_at)
        SELECT d.id, t.topic, t.partition, t.requested_offset, t.resolved_offset, t.spec::json,
            CASE WHEN t.n <= :claimed THEN :claimed_status ELSE :pending END,
            CASE WHEN t.n <= :claimed THEN :claimed_attempts ELSE 0 END,
            CASE WHEN t.n <= :claimed THEN :claimed_fence ELSE 0 END,
            CASE WHEN t.n <= :claimed THEN :lease_owner END,
            CASE WHEN t.n <= :claimed THEN :lease_expires_at END,
            d.created_at,
            CASE WHEN t.n <= :claimed THEN d.claimed_deadline END,
            d.created_at
        FROM unnest(CAST(CAST(:task_deletion AS text) AS bigint[]),
                CAST(CAST(:task_topics AS text) AS text[]), CAST(CAST(:task_partitions AS text) AS integer[]),
                CAST(CAST(:task_requested AS text) AS bigint[]),
                CAST(CAST(:task_resolved AS text) AS bigint[]), CAST(CAST(:task_specs AS text) AS text[]))
            WITH ORDINALITY AS t(d, topic, partition, requested_offset, resolved_offset, spec, n)
        JOIN d ON d.d = t.d
        ORDER BY t.n
        RETURNING id, deletion_id, topic, partition, resolved_offset, lease_owner
    )
    SELECT array_agg(id), array_agg(deletion_id), array_agg(topic), array_agg(partition),
        array_agg(resolved_offset)
    FROM tasks WHERE lease_owner IS NOT NULL
    """
).bindparams(
    *(
        bindparam(column.key, type_=ARRAY(Text if column.key in JSON_COLUMNS else _array_item(column.type)))
        for column in DELETIONS.columns
    ),
    bindparam("claimed_deadline", type_=ARRAY(TIMESTAMP(timezone=True))),
    bindparam("pending", type_=String),
    bindparam("claimed", type_=Integer),
    bindparam("claimed_status", type_=String),
    bindparam("claimed_attempts", type_=Integer),
    bindparam("claimed_fence", type_=Integer),
    bindparam("lease_owner", type_=PD.c.lease_owner.type),
    bindparam("lease_expires_at", type_=PD.c.lease_expires_at.type),
    *(bindparam(name, type_=Text) for name in TASK_ARRAYS),
)
# A new deletion and its planned partitions.
NewDeletion = tuple[Deletion, Sequence[PlannedPartition]]


def _claim_values(lease: Lease | None, total: int) -> dict[str, Any]:
    """The claim columns of the first ``lease.limit`` tasks of all (none without a lease)."""
    if lease is None:
        return {
            "claimed": 0,
            "claimed_status": PartitionStatus.PENDING.value,
            "claimed_attempts": 0,
            "claimed_fence": 0,
            "lease_owner": None,
            "lease_expires_at": None,
        }
    status, fence, attempts = lease.first_claim_state()
    return {
        "claimed": min(lease.limit, total),
        "claimed_status": status.value,
        "claimed_attempts": attempts,
        "claimed_fence": fence,
        "lease_owner": lease.owner,
        "lease_expires_at": lease.expires_at,
    }


async def create_deletions(
    session: AsyncSession, new: Sequence[NewDeletion], *, lease: Lease | None = None
) -> list[Claim]:
    """Insert the deletions and one task row per partition: pending, or for the first ``lease.limit``
    partitions of all of them together (in order) already claimed with ``lease``; those come back as
    claims, in id order. The deletions are not added to the session."""
    if not new:
        return []
    connection = await session.connection()
    claim = _claim_values(lease, sum(len(planned) for _, planned in new))
    deadlines = [lease.first_claim(deletion)[3] if lease else None for deletion, _ in new]
    deletions = [deletion for deletion, _ in new]
    if connection.dialect.name == "postgresql":
        result = await connection.execute(_POSTGRESQL_INSERT, _postgresql_values(new, claim, deadlines))
        ids, deletion_ids, topics, numbers, offsets = result.one()
        if lease is None or ids is None:
            return []
        rows = sorted(zip(ids, deletion_ids, topics, numbers, offsets, strict=True))
        return lease_claims(deletions, lease, rows)
    values = [{name: getattr(deletion, name) for name in DELETION_COLUMNS} for deletion in deletions]
    await connection.execute(INSERT_DELETION, values)
    await connection.execute(INSERT_TASKS, _task_rows(new, claim, deadlines))
    return [] if lease is None else await leased_claims(session, deletions, lease)


async def leased_claims(session: AsyncSession, deletions: Sequence[Deletion], lease: Lease) -> list[Claim]:
    """SQLite: the rows of ``deletions`` that ``create_deletions`` just stored claimed with ``lease``, as
    claims (one query for all of them; PostgreSQL's insert returns them). Only the ids are new."""
    stmt = (
        select(PD.c.id, PD.c.deletion_id, PD.c.topic, PD.c.partition, PD.c.resolved_offset)
        .where(PD.c.deletion_id.in_([d.id for d in deletions]), PD.c.lease_owner == lease.owner)
        .order_by(PD.c.id)
    )
    return lease_claims(deletions, lease, (await session.execute(stmt)).all())


def lease_claims(
    deletions: Sequence[Deletion], lease: Lease, rows: Iterable[tuple[int, str, str, int, int]]
) -> list[Claim]:
    """The claims of rows (id, deletion id, topic, partition, resolved offset) of ``deletions`` stored
    claimed with ``lease``: each carries its first claim's state and its deletion's facts."""
    facts = {
        d.id: (*lease.first_claim(d), d.cluster, d.leader_only, d.timeout_ms, d.request_id) for d in deletions
    }
    return [Claim._make((*row, *facts[row[1]])) for row in rows]


def _postgresql_values(
    new: Sequence[NewDeletion], claim: dict[str, Any], deadlines: Sequence[datetime | None]
) -> dict[str, Any]:
    deletions = [deletion for deletion, _ in new]
    values: dict[str, Any] = {
        name: [getattr(deletion, name) for deletion in deletions] for name in DELETION_COLUMNS
    }
    for name in JSON_COLUMNS:
        values[name] = [json.dumps(value) for value in values[name]]
    texts: dict[int, str] = {}  # by spec object, alive while the statement is built
    planned = [p for _, partitions in new for p in partitions]
    return {
        **values,
        **claim,
        "claimed_deadline": list(deadlines),
        "pending": PartitionStatus.PENDING.value,
        "task_deletion": array_literal([d for d, (_, partitions) in enumerate(new, 1) for _ in partitions]),
        "task_topics": array_literal([p.partition.topic for p in planned], quote=True),
        "task_partitions": array_literal([p.partition.partition for p in planned]),
        "task_requested": array_literal([p.requested_offset for p in planned]),
        "task_resolved": array_literal([p.resolved_offset for p in planned]),
        "task_specs": array_literal([_json_text(p.spec, texts) for p in planned], quote=True),
    }


def _task_rows(
    new: Sequence[NewDeletion], claim: dict[str, Any], deadlines: Sequence[datetime | None]
) -> list[dict[str, Any]]:
    """SQLite: the task rows of every deletion, the first ``claim["claimed"]`` of all claimed."""
    rows: list[dict[str, Any]] = []
    pending = PartitionStatus.PENDING.value
    unclaimed = {"status": pending, "attempts": 0, "fence": 0, "lease_owner": None}
    unclaimed |= {"lease_expires_at": None, "deadline_at": None}
    claimed = {
        "status": claim["claimed_status"],
        "attempts": claim["claimed_attempts"],
        "fence": claim["claimed_fence"],
        "lease_owner": claim["lease_owner"],
        "lease_expires_at": claim["lease_expires_at"],
    }
    for (deletion, partitions), deadline in zip(new, deadlines, strict=True):
        created = deletion.created_at
        start = {"deletion_id": deletion.id, "next_attempt_at": created, "updated_at": created}
        for p in partitions:
            state = claimed | {"deadline_at": deadline} if len(rows) < claim["claimed"] else unclaimed
            rows.append(
                {
                    **start,
                    **state,
                    "topic": p.partition.topic,
                    "partition": p.partition.partition,
                    "requested_offset": p.requested_offset,
                    "resolved_offset": p.resolved_offset,
                    "spec": p.spec,
                }
            )
    return rows


def _json_text(value: dict[str, object] | None, texts: dict[int, str]) -> str | None:
    """``value`` as JSON text. The partitions of one request entry share one spec object (and equal
    specs share one, ``entry_specs``): each object is encoded once, whatever its content."""
    if value is None:
        return None
    if (encoded := texts.get(id(value))) is None:
        encoded = texts[id(value)] = json.dumps(value)
    return encoded


async def get_deletion(session: AsyncSession, deletion_id: str) -> Deletion | None:
    """The deletion as an ORM object, for a write transaction that changes it."""
    return await session.get(Deletion, deletion_id)
