"""The read paths on both databases: ``run_read`` (a synchronous read, checkout included, in one hop to the
greenlet; the read runs once more when its connection was dead) and ``read_session``, both checked out
with the pool's pre-ping; on PostgreSQL reads after the server dropped every connection, the connections
opened at start-up, and what a new connection learns when it opens."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest
from helpers.databases import PG_ADMIN_DSN
from helpers.deletion_rows import new_deletion
from sqlalchemy import event, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from app.adapters.db.repositories.deletions import PlannedPartition, create_deletions
from app.adapters.db.session import create_engine, open_connections, read_session, run_read
from app.domain.ports import Lease, TopicPartition

Maker = async_sessionmaker[AsyncSession]


def record_statements(engine: AsyncEngine) -> list[str]:
    statements: list[str] = []

    @event.listens_for(engine.sync_engine, "before_cursor_execute")
    def _record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    return statements


def pings(engine: AsyncEngine) -> list[bool]:
    """One entry per checkout whose check (``ConnectionCheck``) sent a statement to the server: asyncpg
    counts every query it sends, read here before and after the pool's other checkout listeners."""
    sent: list[bool] = []
    before: dict[int, int] = {}

    @event.listens_for(engine.sync_engine, "checkout", insert=True)
    def first(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        before[id(dbapi_connection)] = dbapi_connection.driver_connection._protocol.queries_count

    @event.listens_for(engine.sync_engine, "checkout")
    def last(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        if dbapi_connection.driver_connection._protocol.queries_count != before.pop(id(dbapi_connection)):
            sent.append(True)

    return sent


def select_one(session: Session) -> int:
    return int(session.execute(text("SELECT 1")).scalar_one())


async def terminate_backends(url: str) -> int:
    admin = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        killed: int = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1",
            url.rsplit("/", 1)[1],
        )
    finally:
        await admin.close()
    return killed


def postgresql_only(url: str) -> None:
    if not url.startswith("postgresql"):
        pytest.skip("PostgreSQL only: connections terminated by the server, statements that wait")


async def test_reads_on_both_databases(engine: AsyncEngine, sessionmaker: Maker) -> None:
    statements = record_statements(engine)
    assert await run_read(sessionmaker, select_one) == 1
    # PostgreSQL reads run in autocommit (no BEGIN/ROLLBACK); SQLite's begin hook still opens one.
    expected = ["BEGIN", "SELECT 1"] if engine.dialect.name == "sqlite" else ["SELECT 1"]
    assert statements == expected


async def test_read_checkouts_only_look_at_the_socket_and_sessions_ping(
    engine: AsyncEngine, sessionmaker: Maker, migrated_url: str
) -> None:
    postgresql_only(migrated_url)
    sent = pings(engine)
    await run_read(sessionmaker, select_one)
    await run_read(sessionmaker, select_one)
    assert sent == []
    async with read_session(sessionmaker) as session:
        await session.execute(text("SELECT 1"))
    assert sent == [True]


async def test_a_read_on_a_connection_that_died_runs_again(sessionmaker: Maker, migrated_url: str) -> None:
    postgresql_only(migrated_url)
    attempts: list[int] = []

    def read(session: Session) -> int:
        attempts.append(1)
        if len(attempts) == 1:
            # The server ends this very connection: the statement fails as a dead connection does.
            session.execute(text("SELECT pg_terminate_backend(pg_backend_pid())"))
        return select_one(session)

    assert await run_read(sessionmaker, read) == 1
    assert len(attempts) == 2


async def test_other_errors_are_raised_without_running_again(sessionmaker: Maker) -> None:
    attempts: list[int] = []

    def read(session: Session) -> None:
        attempts.append(1)
        session.execute(text("SELECT * FROM no_such_table"))

    with pytest.raises(DBAPIError) as raised:
        await run_read(sessionmaker, read)
    assert not raised.value.connection_invalidated
    assert len(attempts) == 1


async def test_reads_succeed_right_after_the_database_dropped_every_connection(
    engine: AsyncEngine, sessionmaker: Maker, migrated_url: str
) -> None:
    postgresql_only(migrated_url)

    # Two reads at once: the pool then keeps two connections.
    def read_slowly(session: Session) -> int:
        return int(session.execute(text("SELECT 1 FROM pg_sleep(0.2)")).scalar_one())

    both = [run_read(sessionmaker, read_slowly), run_read(sessionmaker, read_slowly)]
    assert await asyncio.gather(*both) == [1, 1]
    assert engine.pool.checkedin() == 2  # type: ignore[attr-defined]
    assert await terminate_backends(migrated_url) >= 2
    for _ in range(3):
        assert await run_read(sessionmaker, select_one) == 1


async def test_a_cancelled_read_gives_its_connection_back(
    engine: AsyncEngine, sessionmaker: Maker, migrated_url: str
) -> None:
    postgresql_only(migrated_url)

    def read_long(session: Session) -> None:
        session.execute(text("SELECT pg_sleep(5)"))

    task = asyncio.create_task(run_read(sessionmaker, read_long))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    assert await run_read(sessionmaker, select_one) == 1


async def test_the_pool_keeps_the_connections_a_burst_opened(migrated_url: str) -> None:
    engine = create_engine(migrated_url, pool_size=2)
    opened: list[int] = []
    event.listen(engine.sync_engine, "connect", lambda *_: opened.append(1))
    try:
        for _ in range(3):
            connections = [await engine.connect() for _ in range(4)]
            for connection in connections:
                await connection.close()
        assert len(opened) == 4
        assert engine.pool.checkedin() == 4  # type: ignore[attr-defined]
    finally:
        await engine.dispose()


async def test_the_whole_pool_is_opened_at_start_up(migrated_url: str) -> None:
    engine = create_engine(migrated_url, pool_size=3)
    opened: list[int] = []
    event.listen(engine.sync_engine, "connect", lambda *_: opened.append(1))
    try:
        await open_connections(engine)
        # PostgreSQL: all six connections of the pool are open before the first requests; SQLite's are
        # cheap to open on demand.
        postgresql = engine.dialect.name == "postgresql"
        assert len(opened) == engine.sync_engine.pool.checkedin() == (6 if postgresql else 0)  # type: ignore[attr-defined]
        connections = [await engine.connect() for _ in range(6)]
        for connection in connections:
            await connection.close()
        assert len(opened) == 6  # PostgreSQL: a burst of six opened none of its own
    finally:
        await engine.dispose()


async def test_a_database_down_at_start_up_is_left_to_the_first_request() -> None:
    engine = create_engine("postgresql+asyncpg://postgres@127.0.0.1:9/absent")  # nothing listens there
    try:
        await open_connections(engine)
        assert engine.sync_engine.pool.checkedin() == 0  # type: ignore[attr-defined]
    finally:
        await engine.dispose()


async def test_a_new_connection_learns_the_array_types_in_one_lookup(engine: AsyncEngine) -> None:
    postgresql_only(str(engine.url))
    planned = [PlannedPartition(TopicPartition("orders", p), 5, 5) for p in range(3)]
    lease = Lease("accepting", datetime.now(UTC) + timedelta(seconds=30), limit=2)
    async with engine.connect() as connection:
        driver = (await connection.get_raw_connection()).driver_connection
        statements: list[str] = []
        driver.add_query_logger(lambda record: statements.append(record.query))
        # Storing a deletion with claimed rows binds and returns boolean, integer, varchar, bigint and
        # timestamp arrays: the connection knows them all since it was opened.
        async with AsyncSession(bind=connection) as session, session.begin():
            claims = await create_deletions(session, [(new_deletion(planned), planned)], lease=lease)
    assert [claim.partition for claim in claims] == [0, 1]
    assert statements
    assert not [s for s in statements if "typeinfo" in s]
