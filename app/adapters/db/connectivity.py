"""Can the service open a connection to its database? Asked once before migrating, so that a server that
cannot be reached or refuses the login is reported as such, naming the database (never its password)
and what to check, instead of surfacing as a driver's stack trace."""

from __future__ import annotations

import socket

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from app.urls import shown_url

CONNECT_TIMEOUT_SECONDS = 10


class DatabaseUnavailable(RuntimeError):
    """The database named by ``PURGE_DATABASE_URL`` cannot be connected to (the message says why)."""


async def check_connection(url: str) -> None:
    """Opens one connection to ``url`` and closes it; raises :class:`DatabaseUnavailable` if it fails."""
    parsed = make_url(url)
    connect_args = {"timeout": CONNECT_TIMEOUT_SECONDS} if parsed.get_backend_name() == "postgresql" else {}
    engine = create_async_engine(parsed, poolclass=NullPool, connect_args=connect_args)
    try:
        async with engine.connect():
            pass
    except (DBAPIError, OSError) as exc:
        raise DatabaseUnavailable(
            f"cannot connect to the database {shown_url(parsed)}: {reason(exc, parsed)}"
        ) from None
    finally:
        await engine.dispose()


def reason(exc: DBAPIError | OSError, url: URL) -> str:
    """What went wrong while connecting, and what the operator should check."""
    where = f"{url.host or 'localhost'}:{url.port or 5432}"
    if isinstance(exc, DBAPIError):
        return _refusal(exc, url)
    if isinstance(exc, socket.gaierror):
        return f"the host name {url.host!r} does not resolve; check the host in PURGE_DATABASE_URL"
    if isinstance(exc, ConnectionRefusedError):
        return (
            f"nothing accepts connections at {where}; check that the database server runs there "
            "and the host and port in PURGE_DATABASE_URL"
        )
    if isinstance(exc, TimeoutError):
        return f"no answer from {where} within {CONNECT_TIMEOUT_SECONDS} s; check the network path, firewalls"
    detail = exc.strerror or str(exc)
    return f"{detail}; check the host and port in PURGE_DATABASE_URL and that the server runs"


def _refusal(exc: DBAPIError, url: URL) -> str:
    """The server answered and said no: the login, the database name, or its capacity."""
    server_says = str(exc.orig).strip() or type(exc.orig).__name__
    state = str(getattr(exc.orig, "sqlstate", "") or "")
    if state.startswith("28"):
        return (
            f"the server refused the login of user {url.username!r} ({server_says}); check the user and "
            "password in PURGE_DATABASE_URL and the server's pg_hba.conf"
        )
    if state == "3D000":
        return f"{server_says}; create it, or correct the database name in PURGE_DATABASE_URL"
    if url.get_backend_name() == "sqlite":
        return f"{server_says}; check that the file's folder exists and the service may write there"
    return f"{server_says}; check the server's logs (connection limits, start-up or shut-down)"
