"""SQLite connection set-up and write transactions (BEGIN IMMEDIATE), on real database files."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sqlalchemy import event, text

from app.adapters.db.session import create_engine, make_sessionmaker, read_session, write_transaction


async def test_sqlite_pragmas(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'nested' / 'p.db'}")
    try:
        async with engine.connect() as conn:
            assert (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar() == "wal"
            assert (await conn.exec_driver_sql("PRAGMA foreign_keys")).scalar() == 1
            assert (await conn.exec_driver_sql("PRAGMA busy_timeout")).scalar() >= 5000
    finally:
        await engine.dispose()


async def test_write_transaction_begins_immediate_and_reads_do_not(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'p.db'}")
    statements: list[str] = []

    @event.listens_for(engine.sync_engine, "before_cursor_execute")
    def _record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    try:
        sessions = make_sessionmaker(engine)
        async with write_transaction(sessions) as session:
            await session.execute(text("CREATE TABLE t (n INTEGER)"))
        async with read_session(sessions) as session:
            await session.execute(text("SELECT * FROM t"))
        assert statements == ["BEGIN IMMEDIATE", "CREATE TABLE t (n INTEGER)", "BEGIN", "SELECT * FROM t"]
    finally:
        await engine.dispose()


async def test_concurrent_read_then_write_transactions_queue_instead_of_failing(tmp_path: Path) -> None:
    # A deferred transaction that reads and then writes fails with SQLITE_BUSY at once when another
    # writer got in between; BEGIN IMMEDIATE makes the writers wait on busy_timeout instead.
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'p.db'}", pool_size=8)
    sessions = make_sessionmaker(engine)
    try:
        async with write_transaction(sessions) as session:
            await session.execute(text("CREATE TABLE counter (n INTEGER)"))
            await session.execute(text("INSERT INTO counter VALUES (0)"))

        async def increment() -> None:
            async with write_transaction(sessions) as session:
                n = (await session.execute(text("SELECT n FROM counter"))).scalar_one()
                await asyncio.sleep(0.01)
                await session.execute(text("UPDATE counter SET n = :n"), {"n": n + 1})

        await asyncio.gather(*(increment() for _ in range(12)))
        async with read_session(sessions) as session:
            assert (await session.execute(text("SELECT n FROM counter"))).scalar_one() == 12
    finally:
        await engine.dispose()


async def test_failed_write_transaction_rolls_back(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'p.db'}")
    sessions = make_sessionmaker(engine)
    try:
        async with write_transaction(sessions) as session:
            await session.execute(text("CREATE TABLE t (n INTEGER)"))
        try:
            async with write_transaction(sessions) as session:
                await session.execute(text("INSERT INTO t VALUES (1)"))
                raise RuntimeError("boom")
        except RuntimeError:
            pass
        async with read_session(sessions) as session:
            assert (await session.execute(text("SELECT count(*) FROM t"))).scalar_one() == 0
    finally:
        await engine.dispose()
