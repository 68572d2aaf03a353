"""What the claim queue's modules share: the table, the row types (``Claim`` and ``Lease`` are the
domain's, ``app.domain.ports``), dialect helpers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import NamedTuple, cast

from sqlalchemy import BigInteger, String, Table, any_, bindparam
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from app.adapters.db.models import Deletion, PartitionDeletion
from app.domain.deletion_requests import PartitionStatus

PD = cast(Table, PartitionDeletion.__table__)
DELETIONS = cast(Table, Deletion.__table__)
CLAIMABLE = (PartitionStatus.PENDING, PartitionStatus.IN_PROGRESS, PartitionStatus.LEADER_TRUNCATED)
# SQLite allows 32,766 bound variables per statement; stay well below it.
CHUNK = 5_000


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


def is_postgresql(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), CHUNK):
        yield list(ids[start : start + CHUNK])


def id_in(ids: Sequence[int], postgresql: bool) -> ColumnElement[bool]:
    if postgresql:
        return PD.c.id == any_(bindparam("claim_ids", list(ids), type_=ARRAY(BigInteger)))
    return PD.c.id.in_(list(ids))


def any_of(column: ColumnElement[str], values: Iterable[str], postgresql: bool) -> ColumnElement[bool]:
    """``column IN values``; on PostgreSQL ``column = ANY(:array)``: one statement text whatever the number
    of values, so asyncpg prepares it once (an IN list renders one parameter per value, a new statement
    for each batch size)."""
    ordered = sorted(values)
    if postgresql:
        return column == any_(bindparam(f"{column.key}_values", ordered, type_=ARRAY(String)))
    return column.in_(ordered)


def integer_array(values: Sequence[int | None]) -> str:
    """``values`` as a PostgreSQL array literal (None is NULL)."""
    if None not in values:
        return "{" + ",".join(map(str, values)) + "}"
    return "{" + ",".join(["NULL" if value is None else str(value) for value in values]) + "}"


def text_array(values: Sequence[str | None]) -> str:
    """``values`` as a PostgreSQL array literal: each text quoted, backslash and quote escaped (the only
    characters special inside quotes); None is NULL."""
    quoted = {
        value: '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        for value in set(values)
        if value is not None
    }
    return "{" + ",".join(["NULL" if value is None else quoted[value] for value in values]) + "}"
