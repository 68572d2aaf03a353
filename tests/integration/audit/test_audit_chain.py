"""The audit hash chain on SQLite and PostgreSQL: appends, tamper detection, concurrent appenders."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import AuditEvent
from app.adapters.db.session import read_session, write_transaction
from app.audit import GENESIS_HASH, NewEvent, append_event, verify_chain

Sessions = async_sessionmaker[AsyncSession]


async def _append(sessionmaker: Sessions, n: int, *, tag: str = "t") -> None:
    for i in range(n):
        async with write_transaction(sessionmaker) as session:
            await append_event(
                session,
                NewEvent(
                    action="deletion.requested",
                    principal="User:alice",
                    client_host="127.0.0.1",
                    request_id=f"{tag}-{i}",
                    cluster="demo",
                    deletion_id=None,
                    details={
                        "i": i,
                        "tag": tag,
                        "offsets": [{"topic": "orders", "partition": 0, "offset": 5}],
                    },
                ),
            )


async def _verify(sessionmaker: Sessions, chunk_size: int = 1000) -> tuple[bool, int, int | None, str | None]:
    async with read_session(sessionmaker) as session:
        result = await verify_chain(session, chunk_size=chunk_size)
    return result.ok, result.checked, result.first_broken_id, result.reason


Tamper = Callable[[str], Awaitable[None]]


async def test_empty_chain_verifies(sessionmaker: Sessions) -> None:
    assert await _verify(sessionmaker) == (True, 0, None, None)


async def test_chain_links_events_in_order(sessionmaker: Sessions) -> None:
    await _append(sessionmaker, 5)
    assert await _verify(sessionmaker, chunk_size=2) == (True, 5, None, None)
    async with read_session(sessionmaker) as session:
        events = (await session.execute(select(AuditEvent).order_by(AuditEvent.id))).scalars().all()
    assert [e.id for e in events] == [1, 2, 3, 4, 5]
    assert events[0].prev_hash == GENESIS_HASH
    assert all(later.prev_hash == earlier.hash for earlier, later in itertools.pairwise(events))


async def test_modified_details_are_detected(sessionmaker: Sessions, tamper: Tamper) -> None:
    await _append(sessionmaker, 5)
    await tamper("""UPDATE audit_event SET details = '{"i": 99}' WHERE id = 3""")
    ok, checked, broken, reason = await _verify(sessionmaker, chunk_size=2)
    assert (ok, checked, broken) == (False, 2, 3)
    assert "modified" in (reason or "")


async def test_deleted_middle_event_is_detected(sessionmaker: Sessions, tamper: Tamper) -> None:
    await _append(sessionmaker, 5)
    await tamper("DELETE FROM audit_event WHERE id = 3")
    ok, checked, broken, reason = await _verify(sessionmaker)
    assert (ok, checked, broken) == (False, 2, 4)
    assert "missing" in (reason or "")


async def test_reordered_events_are_detected(sessionmaker: Sessions, tamper: Tamper) -> None:
    await _append(sessionmaker, 5)
    # Swap everything but the ids of events 2 and 3, including their hashes.
    await tamper("UPDATE audit_event SET id = 100 WHERE id = 2")
    await tamper("UPDATE audit_event SET id = 2 WHERE id = 3")
    await tamper("UPDATE audit_event SET id = 3 WHERE id = 100")
    ok, checked, broken, reason = await _verify(sessionmaker)
    assert (ok, checked, broken) == (False, 1, 2)
    assert "reordered" in (reason or "")


async def test_truncated_tail_is_detected(sessionmaker: Sessions, tamper: Tamper) -> None:
    await _append(sessionmaker, 4)
    await tamper("DELETE FROM audit_event WHERE id = 4")
    ok, checked, broken, reason = await _verify(sessionmaker)
    assert (ok, checked, broken) == (False, 3, 4)
    assert "newest events are missing" in (reason or "")


async def test_rolled_back_append_leaves_no_trace(sessionmaker: Sessions) -> None:
    await _append(sessionmaker, 2)
    try:
        async with write_transaction(sessionmaker) as session:
            await append_event(
                session,
                NewEvent(
                    action="x",
                    principal="User:a",
                    client_host=None,
                    request_id=None,
                    cluster=None,
                    deletion_id=None,
                    details={},
                ),
            )
            raise RuntimeError("state change failed")
    except RuntimeError:
        pass
    await _append(sessionmaker, 1, tag="after")
    assert await _verify(sessionmaker) == (True, 3, None, None)


async def test_sixteen_concurrent_appenders_never_fork(sessionmaker: Sessions) -> None:
    await asyncio.gather(*(_append(sessionmaker, 10, tag=f"w{w}") for w in range(16)))
    assert await _verify(sessionmaker) == (True, 160, None, None)
    async with read_session(sessionmaker) as session:
        prevs = (await session.execute(select(func.count(func.distinct(AuditEvent.prev_hash))))).scalar_one()
    assert prevs == 160


async def test_the_database_refuses_updates_and_deletes(sessionmaker: Sessions) -> None:
    await _append(sessionmaker, 2)
    for statement in ("UPDATE audit_event SET principal = 'User:x' WHERE id = 1", "DELETE FROM audit_event"):
        with pytest.raises(DBAPIError, match="append-only"):
            async with write_transaction(sessionmaker) as session:
                await session.execute(text(statement))
    assert await _verify(sessionmaker) == (True, 2, None, None)
