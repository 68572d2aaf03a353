"""Async engine, sessions and write transactions for SQLite (aiosqlite) and PostgreSQL (asyncpg).

SQLite: the driver's own transaction handling is switched off (``isolation_level = None``) and SQLAlchemy's
``begin`` event emits the BEGIN itself, so a write transaction can ask for ``BEGIN IMMEDIATE``. A deferred
transaction that reads first and writes later gets SQLITE_BUSY at once, ignoring busy_timeout; taking the
write lock up front makes writers queue on busy_timeout instead. Every connection runs in WAL mode with
foreign keys enforced.

Writes go through one unit of work, :func:`write_transaction`, which commits or rolls back at its end;
reads through a read session (:func:`read_session`; :func:`run_read` runs a synchronous read of Core rows,
the API's hot read paths in ``app.adapters.db.repositories.deletion_reads``, in one the same way).

PostgreSQL: a pooled connection is checked at checkout (``ConnectionCheck``); a connection the database
closed is replaced before a statement runs on it.

A connection that cannot be opened at all (refused, unresolvable, timed out: the driver's ``OSError``)
is raised as SQLAlchemy's ``DisconnectionError``, so that every database fault is one of SQLAlchemy's
errors (``app.adapters.db.faults`` tells which mean an outage).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlalchemy import event, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import DisconnectionError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import Session
from sqlalchemy.util import await_only

from app.adapters.db.faults import is_outage, note_commit

BEGIN_IMMEDIATE = "purge_begin_immediate"
SQLITE_BUSY_TIMEOUT_MS = 30_000
OUTCOME_ATTEMPTS = 4
OUTCOME_PAUSE_SECONDS = 0.05
log = logging.getLogger("kafka_purge.db")
P = ParamSpec("P")
T = TypeVar("T")


def is_sqlite(engine: AsyncEngine) -> bool:
    return engine.dialect.name == "sqlite"


def create_engine(
    url: str, *, pool_size: int = 10, echo: bool = False, foreign_keys: bool = True
) -> AsyncEngine:
    """An engine for ``url``; SQLite files get their directory created and the pragmas above.

    The pool holds at most ``2 * pool_size`` connections (on PostgreSQL all opened at start-up:
    :func:`open_connections`) and keeps every connection it opened: a connection closed after a burst
    (SQLAlchemy's overflow) is opened again at the next one, and on PostgreSQL opening one (TLS probe,
    authentication, setup queries, statements prepared again) costs more than the requests it serves.
    Under a steady load of 32 concurrent small GETs, reopening overflow connections was 10-17 % of the
    service's CPU.

    ``foreign_keys=False`` is for migrations only: SQLite batch mode recreates tables, and with foreign
    keys on, dropping the old table would cascade into its children.
    """
    pool = {"pool_size": 2 * pool_size, "max_overflow": 0}
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, echo=echo, **pool)
        _install_sqlite_hooks(engine, foreign_keys=foreign_keys)
        return engine
    engine = create_async_engine(url, echo=echo, **pool)
    event.listen(engine.sync_engine, "connect", _learn_array_types)
    event.listen(engine.sync_engine, "checkout", ConnectionCheck.at_checkout)
    return engine


class ConnectionCheck:
    """The check of a pooled PostgreSQL connection at checkout, through SQLAlchemy's public pool events
    (its documented pessimistic disconnect handling: a ``checkout`` listener that raises
    ``DisconnectionError`` makes the pool replace the connection and check out another).

    What it buys: SQLAlchemy's ``pool_pre_ping`` on asyncpg wraps its ``;`` in BEGIN ... ROLLBACK, three
    round trips per checkout, more than a small request's own queries. This check is one round trip
    (``;`` through ``AdaptedConnection.run_async``), and a read run by :func:`run_read` only looks at
    the socket (``socket_only``): a read changes nothing and runs once more if its connection turns out
    dead. ``bench/service_bench.py``'s API load on PostgreSQL, the same run, back to back with
    ``pool_pre_ping``: small GETs 566-673/s with it, see ``bench/README.md`` for this check's figure.
    """

    socket_only: ContextVar[bool] = ContextVar("purge_check_socket_only", default=False)

    @staticmethod
    def at_checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        if dbapi_connection.driver_connection.is_closed():
            raise DisconnectionError("the pooled connection is closed")
        if ConnectionCheck.socket_only.get():
            return
        try:
            dbapi_connection.run_async(lambda driver: driver.fetchrow(";"))
        except Exception as exc:
            raise DisconnectionError("the pooled connection did not answer") from exc


# The array types the service's statements bind and return. asyncpg looks up each type it has no codec
# for with a catalog query of its own (about 10 ms, most of it planning) the first time a connection
# meets it, statement by statement: up to four lookups per new connection, on the first requests' path.
ARRAY_TYPES = "SELECT NULL::boolean[], NULL::integer[], NULL::varchar[], NULL::bigint[], NULL::timestamptz[]"


def _learn_array_types(dbapi_connection: Any, _record: Any) -> None:
    """A new PostgreSQL connection learns every array type the service uses in one lookup.

    SQLAlchemy raises what a connect hook raises as it is; a connection lost during the lookup (its
    backend terminated) is raised as the ``DisconnectionError`` it is, not as the driver's own error."""
    try:
        await_only(dbapi_connection.driver_connection.fetch(ARRAY_TYPES))
    except Exception as exc:
        raise DisconnectionError(f"a new connection was lost while set up ({type(exc).__name__})") from exc


async def open_connections(engine: AsyncEngine) -> None:
    """Open every connection of the pool at once and put them back (PostgreSQL only), so the pool is
    full before the first requests. Opening one costs several round trips and about 10 ms of CPU in the
    service and a new PostgreSQL backend (authentication, the array types' lookup, every statement
    prepared again on its first use); a burst that finds the pool short opens the missing ones on its own
    path, all at once: measured, about 30 new connections stalled both serving processes for 300 ms, and
    a load that had been answered in 3 ms waited up to 350 ms. A database that cannot be reached is
    logged and left to the first request."""
    if is_sqlite(engine):
        return
    count = engine.pool.size()  # type: ignore[attr-defined]
    opened = await asyncio.gather(*(engine.connect().start() for _ in range(count)), return_exceptions=True)
    for connection in opened:
        if isinstance(connection, BaseException):
            log.info("a database connection was not opened at start-up: %s", connection)
        else:
            await connection.close()


def _install_sqlite_hooks(engine: AsyncEngine, *, foreign_keys: bool) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from the driver; the "begin" hook below emits BEGIN.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
            cursor.execute("PRAGMA synchronous=NORMAL")
        finally:
            cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get(BEGIN_IMMEDIATE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)


@asynccontextmanager
async def write_transaction(sessionmaker: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """A session inside a write transaction (BEGIN IMMEDIATE on SQLite), committed on success.

    A COMMIT whose connection is lost (PostgreSQL) is asked about on another connection: committed, the
    block ends as if nothing happened; rolled back, the error is raised as one before COMMIT; unknown,
    it is raised as one after COMMIT (``app.adapters.db.faults``). Knowing the transaction's id costs
    one round trip before each COMMIT."""
    async with sessionmaker() as session:
        # The option reaches the connection before its BEGIN, so the hook sees it.
        await _connect(session, {BEGIN_IMMEDIATE: True})
        try:
            yield session
            # What is still pending is written first: a failure there leaves nothing committed.
            await session.flush()
            xid = await _transaction_id(session)
        except BaseException:
            await session.rollback()
            raise
        try:
            await session.commit()
        except Exception as exc:
            if xid is not None and is_outage(exc):
                outcome = await _outcome(sessionmaker, xid)
                if outcome == "aborted":
                    raise
                if outcome == "committed":
                    note_commit()
                    return
            note_commit()
            raise
        note_commit()


async def _transaction_id(session: AsyncSession) -> int | None:
    """PostgreSQL: the transaction's id if it wrote anything, so that a COMMIT whose connection was lost
    can be asked about (:func:`_outcome`); 0 for one that wrote nothing (nothing to lose). None on SQLite,
    whose COMMIT is a local call."""
    if session.get_bind().dialect.name != "postgresql":
        return None
    xid = (await session.execute(text("SELECT txid_current_if_assigned()"))).scalar()
    return 0 if xid is None else int(xid)


async def _outcome(sessionmaker: async_sessionmaker[AsyncSession], xid: int) -> str | None:
    """What became of transaction ``xid`` whose COMMIT lost its connection: "committed", "aborted"
    (or it wrote nothing), or None when the database cannot say now."""
    if xid == 0:
        return "aborted"
    # The fault that cut the COMMIT (say, every backend terminated) may cut the first question too.
    for attempt in range(OUTCOME_ATTEMPTS):
        await asyncio.sleep(OUTCOME_PAUSE_SECONDS * attempt)
        try:
            async with sessionmaker() as session:
                status = (await session.execute(text("SELECT txid_status(:xid)"), {"xid": xid})).scalar()
        except Exception as exc:
            log.info("the outcome of transaction %d is not known yet (%s)", xid, type(exc).__name__)
            continue
        if status in {"committed", "aborted"}:
            return str(status)
    return None


@asynccontextmanager
async def read_session(sessionmaker: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """A session for reads only; its transaction is rolled back at the end.

    PostgreSQL: in autocommit mode, which saves the BEGIN and ROLLBACK round trips. Under READ COMMITTED
    (the default) every statement sees its own snapshot inside a transaction too, so nothing is lost.
    """
    async with sessionmaker() as session:
        if session.bind is not None and session.bind.dialect.name == "postgresql":
            await _connect(session, {"isolation_level": "AUTOCOMMIT"})
        yield session


async def _connect(session: AsyncSession, options: dict[str, Any]) -> None:
    try:
        await session.connection(execution_options=options)
    except OSError as exc:
        raise DisconnectionError(f"the database cannot be connected to ({type(exc).__name__})") from exc


async def run_read(
    sessionmaker: async_sessionmaker[AsyncSession],
    read: Callable[Concatenate[Session, P], T],
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """``read(session, *args, **kwargs)``, a synchronous read, run as :func:`read_session` runs reads
    (autocommit on PostgreSQL), checkout included, in one ``AsyncSession.run_sync``: every step in one hop
    to the greenlet. For the API's hot reads.

    A read cut by an outage (``app.adapters.db.faults``; say its connection died an instant ago and its
    checkout only looked at the socket, ``ConnectionCheck``) runs once more, on another connection. A
    read changes nothing, so running it twice is safe; any
    other error is raised as is.
    """
    try:
        return await _read_once(sessionmaker, read, args, kwargs)
    except SQLAlchemyError as exc:
        if not is_outage(exc):
            raise
    return await _read_once(sessionmaker, read, args, kwargs)


async def _read_once(
    sessionmaker: async_sessionmaker[AsyncSession],
    read: Callable[..., T],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> T:
    async with sessionmaker() as session:
        try:
            return await session.run_sync(_read_in, read, args, kwargs)
        except OSError as exc:
            raise DisconnectionError(f"the database cannot be connected to ({type(exc).__name__})") from exc


def _read_in(session: Session, read: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
    postgresql = session.get_bind().dialect.name == "postgresql"
    # Runs in the greenlet of ``run_sync``: the checkout below is the one that only looks at the socket.
    token = ConnectionCheck.socket_only.set(True)
    try:
        session.connection(execution_options={"isolation_level": "AUTOCOMMIT"} if postgresql else None)
    finally:
        ConnectionCheck.socket_only.reset(token)
    return read(session, *args, **kwargs)
