"""The database source rebuilds its authorizer only when the cluster's ACL version moved."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories import acls as repo
from app.adapters.db.session import write_transaction
from app.auth.acl_sources import ServiceAclSource
from app.domain.acl import AclBinding, AclFilter, Operation, PatternType, Permission, ResourceType

BOB = AclBinding(
    "User:bob", "*", Operation.DELETE, Permission.ALLOW, ResourceType.TOPIC, "t", PatternType.LITERAL
)


async def _add(sessionmaker: async_sessionmaker[AsyncSession], cluster: str, binding: AclBinding) -> bool:
    async with write_transaction(sessionmaker) as session:
        await repo.bump_version(session, cluster)
        return await repo.add_binding(session, cluster, binding, datetime.now(UTC))


async def test_cached_until_the_version_moves(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    source = ServiceAclSource(sessionmaker, frozenset())
    empty = await source.authorizer("demo")
    assert await source.authorizer("demo") is empty
    assert len(empty) == 0

    assert await _add(sessionmaker, "demo", BOB)
    assert not await _add(sessionmaker, "demo", BOB)  # already there: nothing stored twice
    assert await _add(sessionmaker, "other", BOB)

    loaded = await source.authorizer("demo")
    assert loaded is not empty
    assert loaded.bindings == (BOB,)
    assert await source.authorizer("demo") is loaded
    async with write_transaction(sessionmaker) as session:
        assert await repo.acl_version(session, "demo") == 2
        await repo.bump_version(session, "demo")
        assert await repo.delete_matching(session, "demo", AclFilter(principal="User:bob")) == [BOB]
    assert len(await source.authorizer("demo")) == 0
    assert (await source.authorizer("other")).bindings == (BOB,)
