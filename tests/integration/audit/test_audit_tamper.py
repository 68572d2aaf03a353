"""Rows the service did not write, on SQLite and PostgreSQL: the database refuses an insert that is not
the next link; with its trigger dropped, verification reports a row past the head, reads hide it, and an
append that meets it raises ``AuditChainBroken``. A deleted head row is a broken chain, not an error."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from helpers.audit import append, hash_of, insert_sql, raw
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories import audit as repo
from app.adapters.db.session import read_session
from app.audit import GENESIS_HASH, verify_chain
from app.errors import AuditChainBroken

Sessions = async_sessionmaker[AsyncSession]
Tamper = Callable[[str], Awaitable[None]]


async def test_the_database_refuses_an_insert_that_is_not_the_next_link(sessionmaker: Sessions) -> None:
    await append(sessionmaker, 3)
    third = await hash_of(sessionmaker, 3)
    refused = [
        insert_sql(4, third),  # the right link, but past the head
        insert_sql(5, third),  # a gap, past the head
        insert_sql(2, GENESIS_HASH),  # an id already taken
        insert_sql(0, GENESIS_HASH),  # before the genesis
    ]
    for statement in refused:
        with pytest.raises(DBAPIError, match="next link"):
            await raw(sessionmaker, statement)
    # With the head moved past it (as an append does first), only the right prev_hash is accepted.
    await raw(sessionmaker, "UPDATE audit_head SET last_event_id = 4")
    with pytest.raises(DBAPIError, match="next link"):
        await raw(sessionmaker, insert_sql(4, GENESIS_HASH))
    await raw(sessionmaker, insert_sql(4, third))
    async with read_session(sessionmaker) as session:
        assert [e.id for e in await repo.list_events(session, limit=10)] == [1, 2, 3, 4]


async def test_the_database_refuses_a_first_event_without_the_genesis_hash(sessionmaker: Sessions) -> None:
    await raw(sessionmaker, "UPDATE audit_head SET last_event_id = 1")
    with pytest.raises(DBAPIError, match="next link"):
        await raw(sessionmaker, insert_sql(1, "f" * 64))
    await raw(sessionmaker, insert_sql(1, GENESIS_HASH))


async def test_a_row_past_the_head_is_reported_and_hidden(sessionmaker: Sessions, tamper: Tamper) -> None:
    await append(sessionmaker, 3)
    await tamper(insert_sql(4, await hash_of(sessionmaker, 3)))
    async with read_session(sessionmaker) as session:
        result = await verify_chain(session)
        listed = [e.id for e in await repo.list_events(session, limit=10)]
    assert (result.ok, result.checked, result.first_broken_id) == (False, 3, 4)
    assert "past the head" in (result.reason or "")
    assert listed == [1, 2, 3]


async def test_a_row_below_the_first_event_is_reported(sessionmaker: Sessions, tamper: Tamper) -> None:
    await append(sessionmaker, 2)
    await tamper(insert_sql(-1, GENESIS_HASH))
    async with read_session(sessionmaker) as session:
        result = await verify_chain(session)
        listed = [e.id for e in await repo.list_events(session, limit=10)]
    assert (result.ok, result.first_broken_id) == (False, -1)
    assert listed == [1, 2]


async def test_an_append_meeting_a_foreign_row_raises_audit_chain_broken(
    sessionmaker: Sessions, tamper: Tamper
) -> None:
    await append(sessionmaker, 2)
    await tamper(insert_sql(3, await hash_of(sessionmaker, 2)))
    with pytest.raises(AuditChainBroken):
        await append(sessionmaker, 1)
    # Nothing moved: the head still names event 2, and the foreign row is still reported.
    async with read_session(sessionmaker) as session:
        assert await repo.read_head(session) == (2, await hash_of(sessionmaker, 2))
        assert (await verify_chain(session)).first_broken_id == 3


async def test_a_deleted_head_row_is_a_broken_chain(sessionmaker: Sessions) -> None:
    await append(sessionmaker, 2)
    await raw(sessionmaker, "DELETE FROM audit_head")
    async with read_session(sessionmaker) as session:
        result = await verify_chain(session)
    assert (result.ok, result.checked) == (False, 0)
    assert "no head row" in (result.reason or "")
    with pytest.raises(AuditChainBroken, match="no head row"):
        await append(sessionmaker, 1)
