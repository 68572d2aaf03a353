"""The API's reads of deletions and their partitions: Core statements selecting only what a response
shows (no ORM identity map, instance state or unit of work: a GET spent most of its time there).

Each read is synchronous and takes a ``Session``: the caller runs it with
``app.adapters.db.session.run_read``, checkout and every statement in one hop to the greenlet. A read
returns the deletion with what was asked of it; the caller decides visibility, after the session is
closed.
Statements are built once per shape with bound parameters, so SQLAlchemy reuses their cache key and
compiled form instead of rebuilding both for every request."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, cast

from sqlalchemy import Integer, Row, Select, String, Table, and_, bindparam, exists, func, or_, select, tuple_
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from app.adapters.db.models import Deletion, PartitionDeletion
from app.domain.deletion_requests import DeletionStatus, PartitionStatus

DELETION = cast(Table, Deletion.__table__)
PARTITION = cast(Table, PartitionDeletion.__table__)


@dataclass(frozen=True, slots=True)
class DeletionRecord:
    """A deletion as the API shows it (and decides visibility on)."""

    id: str
    cluster: str
    principal: str
    request_id: str
    reason: str
    leader_only: bool
    timeout_ms: int
    status: str
    partition_count: int
    topics: list[str]
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None


RECORD_COLUMNS = tuple(DELETION.c[name] for name in DeletionRecord.__dataclass_fields__)
PARTITION_COLUMNS = tuple(
    PARTITION.c[name]
    for name in (
        "topic",
        "partition",
        "requested_offset",
        "resolved_offset",
        "spec",
        "status",
        "low_watermark",
        "leader_log_start_offset",
        "error_code",
        "error_message",
        "attempts",
        "updated_at",
    )
)
_DELETION_BY_ID = select(*RECORD_COLUMNS).where(DELETION.c.id == bindparam("deletion_id"))
_PARTITION_BY_KEY = select(*PARTITION_COLUMNS).where(
    PARTITION.c.deletion_id == bindparam("deletion_id"),
    PARTITION.c.topic == bindparam("topic"),
    PARTITION.c.partition == bindparam("partition"),
)
_STATUS_COUNTS = (
    select(PARTITION.c.status, func.count())
    .where(PARTITION.c.deletion_id == bindparam("deletion_id"))
    .group_by(PARTITION.c.status)
)


# The joined read repeats the deletion's columns on every partition row: worth it for a few rows (one
# round trip instead of two), not for a page of a thousand.
JOINED_PARTITIONS = 32
_DELETION_WITH_PARTITIONS = (
    select(*(column.label(f"deletion_{column.name}") for column in RECORD_COLUMNS), *PARTITION_COLUMNS)
    .select_from(DELETION.outerjoin(PARTITION, PARTITION.c.deletion_id == DELETION.c.id))
    .where(DELETION.c.id == bindparam("deletion_id"))
    .order_by(PARTITION.c.topic, PARTITION.c.partition)
    .limit(bindparam("head"))
)


def record_of(deletion: Deletion) -> DeletionRecord:
    return DeletionRecord(*(getattr(deletion, name) for name in DeletionRecord.__dataclass_fields__))


@dataclass(frozen=True, slots=True)
class FirstPartitions:
    """A deletion's first partitions (``PARTITION_COLUMNS``) and the count of all of them per status."""

    rows: Sequence[Row[Any]]
    counts: dict[PartitionStatus, int]


def read_deletion(session: Session, deletion_id: str) -> DeletionRecord | None:
    connection = session.connection()
    row = connection.execute(_DELETION_BY_ID, {"deletion_id": deletion_id}).first()
    return None if row is None else DeletionRecord(*row)


def deletion_with_first_partitions(
    session: Session, deletion_id: str, limit: int
) -> tuple[DeletionRecord, FirstPartitions] | None:
    """One statement for a deletion of up to ``JOINED_PARTITIONS`` partitions (most of them): the deletion
    joined with its partitions. Larger ones read the rest of the page after these, as
    :func:`first_partitions` would."""
    connection = session.connection()
    head = min(limit, JOINED_PARTITIONS)
    joined = connection.execute(_DELETION_WITH_PARTITIONS, {"deletion_id": deletion_id, "head": head}).all()
    if not joined:
        return None
    first = joined[0]
    deletion = DeletionRecord(*first[: len(RECORD_COLUMNS)])
    rows: Sequence[Row[Any]] = joined if first.topic is not None else []
    if len(rows) == head and deletion.partition_count > head and limit > head:
        after = (rows[-1].topic, rows[-1].partition)
        rows = [*rows, *list_partitions(connection, deletion_id, after=after, limit=limit - head)]
    return deletion, _first_partitions(connection, deletion, rows)


def first_partitions(session: Session, deletion: DeletionRecord, limit: int) -> FirstPartitions:
    connection = session.connection()
    return _first_partitions(connection, deletion, list_partitions(connection, deletion.id, limit=limit))


def _first_partitions(
    connection: Connection, deletion: DeletionRecord, rows: Sequence[Row[Any]]
) -> FirstPartitions:
    # A deletion's partitions are all inserted with it: when the page holds all of them, count them
    # here instead of asking the database a second time.
    if len(rows) == deletion.partition_count:
        return FirstPartitions(rows, dict(Counter(PartitionStatus(row.status) for row in rows)))
    return FirstPartitions(rows, status_counts(connection, deletion.id))


def status_counts(connection: Connection, deletion_id: str) -> dict[PartitionStatus, int]:
    rows = connection.execute(_STATUS_COUNTS, {"deletion_id": deletion_id})
    return {PartitionStatus(status): count for status, count in rows}


def deletion_with_partitions(
    session: Session,
    deletion_id: str,
    *,
    status: PartitionStatus | None = None,
    after: tuple[str, int] | None = None,
    limit: int,
) -> tuple[DeletionRecord, Sequence[Row[Any]]] | None:
    connection = session.connection()
    deletion = read_deletion(session, deletion_id)
    if deletion is None:
        return None
    return deletion, list_partitions(connection, deletion_id, status=status, after=after, limit=limit)


def list_partitions(
    connection: Connection,
    deletion_id: str,
    *,
    status: PartitionStatus | None = None,
    after: tuple[str, int] | None = None,
    limit: int,
) -> Sequence[Row[Any]]:
    """Partitions (``PARTITION_COLUMNS``) in (topic, partition) order, starting after ``after``."""
    parameters: dict[str, Any] = {"deletion_id": deletion_id, "limit": limit}
    if status is not None:
        parameters["status"] = status.value
    if after is not None:
        parameters["after_topic"], parameters["after_partition"] = after
    query = _partitions_query(by_status=status is not None, after=after is not None)
    rows: Sequence[Row[Any]] = connection.execute(query, parameters).all()
    return rows


@cache
def _partitions_query(*, by_status: bool, after: bool) -> Select[Any]:
    query = select(*PARTITION_COLUMNS).where(PARTITION.c.deletion_id == bindparam("deletion_id"))
    if by_status:
        query = query.where(PARTITION.c.status == bindparam("status"))
    if after:
        after_key = tuple_(
            bindparam("after_topic", type_=String), bindparam("after_partition", type_=Integer)
        )
        query = query.where(tuple_(PARTITION.c.topic, PARTITION.c.partition) > after_key)
    return query.order_by(PARTITION.c.topic, PARTITION.c.partition).limit(bindparam("limit"))


def deletion_with_partition(
    session: Session, deletion_id: str, topic: str, partition: int
) -> tuple[DeletionRecord, Row[Any] | None] | None:
    connection = session.connection()
    deletion = read_deletion(session, deletion_id)
    if deletion is None:
        return None
    parameters = {"deletion_id": deletion_id, "topic": topic, "partition": partition}
    return deletion, connection.execute(_PARTITION_BY_KEY, parameters).first()


@dataclass(frozen=True, slots=True)
class DeletionFilters:
    """What a list of deletions is narrowed to (None: any)."""

    status: DeletionStatus | None = None
    topic: str | None = None
    cluster: str | None = None


def list_deletions(
    session: Session,
    filters: DeletionFilters,
    *,
    before: tuple[datetime, str] | None = None,
    limit: int,
) -> list[DeletionRecord]:
    """Newest first; ``before`` is the (created_at, id) of the last deletion already read."""
    connection = session.connection()
    parameters: dict[str, Any] = {"limit": limit}
    if filters.status is not None:
        parameters["status"] = filters.status.value
    if filters.cluster is not None:
        parameters["cluster"] = filters.cluster
    if filters.topic is not None:
        parameters["topic"] = filters.topic
    if before is not None:
        parameters["before_at"], parameters["before_id"] = before
    query = _deletions_query(frozenset(name for name in parameters if name != "limit"))
    return [DeletionRecord(*row) for row in connection.execute(query, parameters)]


@cache
def _deletions_query(filters: frozenset[str]) -> Select[Any]:
    query = select(*RECORD_COLUMNS)
    if "status" in filters:
        query = query.where(DELETION.c.status == bindparam("status"))
    if "cluster" in filters:
        query = query.where(DELETION.c.cluster == bindparam("cluster"))
    if "topic" in filters:
        query = query.where(
            exists().where(PARTITION.c.deletion_id == DELETION.c.id, PARTITION.c.topic == bindparam("topic"))
        )
    if "before_at" in filters:
        created_at, deletion_id = DELETION.c.created_at, DELETION.c.id
        query = query.where(
            or_(
                created_at < bindparam("before_at"),
                and_(created_at == bindparam("before_at"), deletion_id < bindparam("before_id")),
            )
        )
    return query.order_by(DELETION.c.created_at.desc(), DELETION.c.id.desc()).limit(bindparam("limit"))
