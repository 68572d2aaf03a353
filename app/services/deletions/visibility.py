"""Which deletions a caller may see: one they may not is a 404, never a 403, and a page of deletions
skips those they may not see without saying anything about them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import Deletion
from app.adapters.db.repositories import deletion_reads as reads
from app.adapters.db.repositories import deletions as repo
from app.adapters.db.repositories.deletion_reads import DeletionRecord, FirstPartitions
from app.adapters.db.session import run_read
from app.auth import Principal
from app.auth.permissions import KafkaAclAuthorization
from app.domain.deletion_requests import DeletionScope, PartitionStatus
from app.errors import NotFound
from app.services.runtime import Runtime

D = TypeVar("D", bound=DeletionScope)
T = TypeVar("T")


# Deletions read at a time while filling a page past ones the caller may not see (doubling from a page).
MAX_SCAN_BATCH = 1000


async def visible_deletions(
    runtime: Runtime,
    principal: Principal,
    filters: reads.DeletionFilters,
    before: tuple[datetime, str] | None,
    size: int,
) -> tuple[list[DeletionRecord], bool]:
    """Up to ``size`` deletions the caller may see, newest first after ``before``, and whether another
    one they may see follows. Ones they may not see are skipped, however many: a page, its length and
    its cursor say nothing about them."""
    shown: list[DeletionRecord] = []
    batch = size + 1
    while True:
        rows = await run_read(runtime.sessionmaker, reads.list_deletions, filters, before=before, limit=batch)
        for row in rows:
            if await runtime.authorization.can_view(principal, row):
                if len(shown) == size:
                    return shown, True
                shown.append(row)
        if len(rows) < batch:
            return shown, False
        before, batch = (rows[-1].created_at, rows[-1].id), min(batch * 2, MAX_SCAN_BATCH)


async def visible_deletion(
    session: AsyncSession, authorization: KafkaAclAuthorization, principal: Principal, deletion_id: str
) -> Deletion:
    """The deletion (ORM, for a transaction that changes it), or 404 when it does not exist or the caller
    may not see it (no 403 oracle)."""
    return await visible(authorization, principal, deletion_id, await repo.get_deletion(session, deletion_id))


async def visible(
    authorization: KafkaAclAuthorization, principal: Principal, deletion_id: str, deletion: D | None
) -> D:
    """``deletion``, or 404 when it does not exist or the caller may not see it (no 403 oracle)."""
    found = None if deletion is None else (deletion, None)
    return (await visible_with(authorization, principal, deletion_id, found))[0]


async def visible_with(
    authorization: KafkaAclAuthorization, principal: Principal, deletion_id: str, found: tuple[D, T] | None
) -> tuple[D, T]:
    """``found`` (a deletion and what was read with it), or 404 exactly as :func:`visible`."""
    if found is None or not await authorization.can_view(principal, found[0]):
        raise NotFound(f"No deletion {deletion_id!r}.")
    return found


async def read_deletion(
    runtime: Runtime, principal: Principal, deletion_id: str, limit: int
) -> tuple[DeletionRecord, FirstPartitions]:
    """The deletion and its first ``limit`` partitions, or 404 exactly as :func:`visible`."""
    found = await run_read(runtime.sessionmaker, reads.deletion_with_first_partitions, deletion_id, limit)
    return await visible_with(runtime.authorization, principal, deletion_id, found)


async def first_partitions(runtime: Runtime, deletion: DeletionRecord, limit: int) -> FirstPartitions:
    """The first ``limit`` partitions of a deletion the caller was already shown."""
    return await run_read(runtime.sessionmaker, reads.first_partitions, deletion, limit)


async def read_partitions(
    runtime: Runtime,
    principal: Principal,
    deletion_id: str,
    *,
    status: PartitionStatus | None,
    after: tuple[str, int] | None,
    limit: int,
) -> Sequence[Row[Any]]:
    """A page of a deletion's partitions in (topic, partition) order, or 404 exactly as :func:`visible`."""
    read = reads.deletion_with_partitions
    found = await run_read(runtime.sessionmaker, read, deletion_id, status=status, after=after, limit=limit)
    return (await visible_with(runtime.authorization, principal, deletion_id, found))[1]


async def read_partition(
    runtime: Runtime, principal: Principal, deletion_id: str, topic: str, partition: int
) -> Row[Any]:
    """One partition of a deletion; 404 when the deletion is not visible or has no such partition."""
    found = await run_read(runtime.sessionmaker, reads.deletion_with_partition, deletion_id, topic, partition)
    _, row = await visible_with(runtime.authorization, principal, deletion_id, found)
    if row is None:
        raise NotFound(f"Deletion {deletion_id!r} has no partition {topic}-{partition}.")
    return row
