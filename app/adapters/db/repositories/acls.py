"""Queries on the ACL bindings of clusters whose ``acl_source`` is ``service``, and their version counter.

Every change bumps the cluster's ``acl_version`` first: on PostgreSQL that row lock serializes concurrent
changes of one cluster (SQLite's BEGIN IMMEDIATE already does), and every service instance reads the
counter before deciding, so it notices a change made by another instance on its next decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import AclBinding as AclBindingRow
from app.adapters.db.models import AclVersion, Deletion
from app.domain.acl import AclBinding, AclFilter, Operation, PatternType, Permission, ResourceType
from app.domain.ports import Requester as Requester  # re-exported: the worker reads requesters here


def _binding(row: AclBindingRow) -> AclBinding:
    return AclBinding(
        principal=row.principal,
        host=row.host,
        operation=Operation(row.operation),
        permission=Permission(row.permission),
        resource_type=ResourceType(row.resource_type),
        resource_name=row.resource_name,
        pattern_type=PatternType(row.pattern_type),
    )


def _row(cluster: str, binding: AclBinding, now: datetime) -> AclBindingRow:
    return AclBindingRow(
        cluster=cluster,
        resource_type=binding.resource_type.value,
        pattern_type=binding.pattern_type.value,
        resource_name=binding.resource_name,
        principal=binding.principal,
        host=binding.host,
        operation=binding.operation.value,
        permission=binding.permission.value,
        created_at=now,
    )


async def acl_version(session: AsyncSession, cluster: str) -> int:
    """The cluster's ACL version; 0 before its first change."""
    value = await session.scalar(select(AclVersion.version).where(AclVersion.cluster == cluster))
    return int(value or 0)


async def bump_version(session: AsyncSession, cluster: str) -> int:
    """Increment (creating at 1) the cluster's ACL version; holds its row lock until the commit."""
    dialect = session.get_bind().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    statement = (
        insert(AclVersion)
        .values(cluster=cluster, version=1)
        .on_conflict_do_update(index_elements=[AclVersion.cluster], set_={"version": AclVersion.version + 1})
        .returning(AclVersion.version)
    )
    return int((await session.execute(statement)).scalar_one())


async def list_bindings(session: AsyncSession, cluster: str) -> list[AclBinding]:
    """Every binding of the cluster, oldest first (plain columns: no ORM objects for 100,000 rows)."""
    rows = await session.execute(
        select(
            AclBindingRow.principal,
            AclBindingRow.host,
            AclBindingRow.operation,
            AclBindingRow.permission,
            AclBindingRow.resource_type,
            AclBindingRow.resource_name,
            AclBindingRow.pattern_type,
        )
        .where(AclBindingRow.cluster == cluster)
        .order_by(AclBindingRow.id)
    )
    operations, permissions = Operation.__members__, Permission.__members__
    kinds, patterns = ResourceType.__members__, PatternType.__members__
    return [
        AclBinding(principal, host, operations[op], permissions[perm], kinds[kind], name, patterns[pattern])
        for principal, host, op, perm, kind, name, pattern in rows
    ]


async def _find(session: AsyncSession, cluster: str, binding: AclBinding) -> int | None:
    query = select(AclBindingRow.id).where(
        AclBindingRow.cluster == cluster,
        AclBindingRow.resource_type == binding.resource_type.value,
        AclBindingRow.pattern_type == binding.pattern_type.value,
        AclBindingRow.resource_name == binding.resource_name,
        AclBindingRow.principal == binding.principal,
        AclBindingRow.host == binding.host,
        AclBindingRow.operation == binding.operation.value,
        AclBindingRow.permission == binding.permission.value,
    )
    return await session.scalar(query)


async def add_binding(session: AsyncSession, cluster: str, binding: AclBinding, now: datetime) -> bool:
    """Store the binding; False (and nothing written) when the cluster already has it."""
    if await _find(session, cluster, binding) is not None:
        return False
    session.add(_row(cluster, binding, now))
    await session.flush()
    return True


async def delete_matching(session: AsyncSession, cluster: str, acl_filter: AclFilter) -> list[AclBinding]:
    """Delete the cluster's bindings the filter selects (Kafka's DeleteAcls); returns them."""
    rows = list(
        await session.scalars(
            select(AclBindingRow).where(AclBindingRow.cluster == cluster).order_by(AclBindingRow.id)
        )
    )
    chosen = [(row.id, binding) for row in rows if acl_filter.matches(binding := _binding(row))]
    ids = [row_id for row_id, _ in chosen]
    for start in range(0, len(ids), 1_000):
        await session.execute(delete(AclBindingRow).where(AclBindingRow.id.in_(ids[start : start + 1_000])))
    return [binding for _, binding in chosen]


async def requesters(session: AsyncSession, deletion_ids: Sequence[str]) -> dict[str, Requester]:
    """The requester of each deletion, by deletion id."""
    if not deletion_ids:
        return {}
    rows = await session.execute(
        select(Deletion.id, Deletion.principal, Deletion.principal_groups, Deletion.client_host).where(
            Deletion.id.in_(list(deletion_ids))
        )
    )
    return {
        deletion_id: Requester(principal, tuple(groups or ()), client_host)
        for deletion_id, principal, groups, client_host in rows
    }
