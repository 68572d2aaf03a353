"""Audit rows for tests: appending, forging and reading back events, and checking the chain (imported by
name: pytest puts this directory on sys.path)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import AuditEvent
from app.adapters.db.session import read_session, write_transaction
from app.audit import NewEvent, append_event, verify_chain

Sessions = async_sessionmaker[AsyncSession]


async def append(sessionmaker: Sessions, n: int) -> None:
    for i in range(n):
        async with write_transaction(sessionmaker) as session:
            await append_event(
                session,
                NewEvent(
                    action="acl.created",
                    principal="User:alice",
                    client_host="127.0.0.1",
                    request_id=f"r-{i}",
                    cluster="demo",
                    deletion_id=None,
                    details={"i": i},
                ),
            )


async def chain_ok(sessionmaker: Sessions) -> int:
    """How many events the audit chain holds; it must verify."""
    async with read_session(sessionmaker) as session:
        result = await verify_chain(session)
    assert result.ok, result
    return result.checked


async def count_events(sessionmaker: Sessions, action: str) -> dict[str | None, int]:
    """Deletion id -> how many ``action`` events it has."""
    async with read_session(sessionmaker) as session:
        query = (
            select(AuditEvent.deletion_id, func.count())
            .where(AuditEvent.action == action)
            .group_by(AuditEvent.deletion_id)
        )
        rows = (await session.execute(query)).all()
    return {row[0]: row[1] for row in rows}


async def hash_of(sessionmaker: Sessions, event_id: int) -> str:
    async with read_session(sessionmaker) as session:
        return str((await session.execute(select(AuditEvent.hash).where(AuditEvent.id == event_id))).scalar())


def insert_sql(event_id: int, prev_hash: str) -> str:
    """An INSERT of a forged event ``event_id`` chained to ``prev_hash``."""
    return (
        "INSERT INTO audit_event (id, occurred_at, principal, client_host, request_id, action, cluster, "
        f"deletion_id, details, prev_hash, hash) VALUES ({event_id}, '2026-11-25 12:00:00', "
        f"'User:mallory', NULL, NULL, 'acl.created', 'demo', NULL, '{{}}', '{prev_hash}', "
        f"'forged-{event_id}')"
    )


async def raw(sessionmaker: Sessions, statement: str) -> None:
    """Run ``statement`` as the service's own database role would (the triggers in place)."""
    async with write_transaction(sessionmaker) as session:
        await session.execute(text(statement))


async def wait_until(check: Callable[[], bool], within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while True:
        if check():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {within} s")
        await asyncio.sleep(0.02)


async def wait_until_async(check: Callable[[], Awaitable[bool]], within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while True:
        if await check():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {within} s")
        await asyncio.sleep(0.05)
