"""Database faults: which errors mean "the database cannot be used right now", and whether a piece of work
cut by one may run again.

An error is an outage (:func:`is_outage`) when the connection was lost or could not be opened, the
pool had no connection to give, or the server refuses work for a reason of its own (shutting down, a
backend terminated, too many connections, a database closed to connections). Errors of the work itself
(a constraint, a bad statement) are not.

A unit of work whose connection was lost before its COMMIT was sent rolled back: nothing it did
remains. One cut while committing may have committed or not. :class:`Commits` records, for one attempt
at some work (an API request), whether any of its units of work reached COMMIT: while none did, running
the whole attempt again is the same as running it once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from sqlalchemy.exc import DBAPIError, DisconnectionError, IntegrityError
from sqlalchemy.exc import TimeoutError as PoolTimeout

# SQLSTATE classes of a server that cannot take work now: connection exception (08), insufficient
# resources (53: too many connections, out of memory or disk), operator intervention (57P: a backend
# terminated, the server shutting down or starting, the database dropped meanwhile).
OUTAGE_STATES = ("08", "53", "57P")
# SQLite's primary result codes of the same kind: BUSY, LOCKED, NOMEM, IOERR, FULL, CANTOPEN.
OUTAGE_SQLITE_CODES = frozenset({5, 6, 7, 10, 13, 14})


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` says the database cannot be used right now (see the module's docstring)."""
    if isinstance(exc, PoolTimeout | DisconnectionError):
        return True
    if not isinstance(exc, DBAPIError) or isinstance(exc, IntegrityError):
        return False
    if exc.connection_invalidated:
        return True
    sqlite_code = getattr(exc.orig, "sqlite_errorcode", None)
    if isinstance(sqlite_code, int):
        return sqlite_code & 0xFF in OUTAGE_SQLITE_CODES
    state = str(getattr(exc.orig, "sqlstate", "") or "")
    # No statement: the error came while connecting (a database closed to connections, 55000), or with
    # a COMMIT whose connection went away.
    return state.startswith(OUTAGE_STATES) or exc.statement is None


def fault_name(exc: BaseException) -> str:
    """The error's class and SQLSTATE: enough to tell faults apart in a log line, without the driver's
    message (it may quote statements and values) or a stack trace."""
    state = getattr(getattr(exc, "orig", None), "sqlstate", None)
    return f"{type(exc).__name__}{f' {state}' if state else ''}"


@dataclass
class Commits:
    """Whether an attempt at some work reached COMMIT in any unit of work (see the module's docstring)."""

    reached: bool = False


_attempt: ContextVar[Commits | None] = ContextVar("purge_attempt_commits", default=None)


@contextmanager
def recorded_commits() -> Iterator[Commits]:
    """Record the commits of the work run inside (and of the tasks it starts) in a new :class:`Commits`."""
    commits = Commits()
    token = _attempt.set(commits)
    try:
        yield commits
    finally:
        _attempt.reset(token)


def note_commit() -> None:
    """The current unit of work sends its COMMIT (or stored work on the caller's behalf committed)."""
    commits = _attempt.get()
    if commits is not None:
        commits.reached = True
