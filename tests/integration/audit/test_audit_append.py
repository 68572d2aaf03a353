"""Appending on PostgreSQL (an INSERT from arrays) and on SQLite (an executemany), the hashes computed in
Python on both: the same events get the same hashes, big and many events store and verify, and concurrent
appenders, waiting or rolled back, leave one chain without forks or gaps."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.migrate import upgrade
from app.adapters.db.models import AuditEvent, AuditHead
from app.adapters.db.session import create_engine, make_sessionmaker, read_session, write_transaction
from app.audit import (
    NewEvent,
    append_event,
    append_events,
    canonical_json,
    chain_hash,
    event_content,
    verify_chain,
)
from app.audit.chain import event_hash

Sessions = async_sessionmaker[AsyncSession]

AWKWARD_TEXT = [
    "zoë",
    "e\u0301",  # combining accent, not normalized
    "日本語",
    "שלום",
    "🧹👩‍👩‍👧",  # astral code points and a zero-width joiner sequence
    "\ufeff\u2028\u2029",
    "\x00\x01\x1f\x7f",
    '"\\/</script>',
    '","id":1,"x":"',
]
AWKWARD_DETAILS: dict[str, Any] = {
    "texts": AWKWARD_TEXT,
    "numbers": [0, -1, 2**63, 2**80, -(2**70), 1.5, -0.0, 0.1, 1e300, 5e-324, 1e-7],
    "flags": [True, False, None],
    "nested": {"z": {"a": [], "b": {}}, "a": [[], [{}], ""]},
    "id": 7,
    "details": {"id": "not the event's"},
    'x"id': "a key with a quote",
    "é": "a non-ASCII key",
    "moment": datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
    "partitions": [{"topic": "orders", "partition": p, "offset": p * 1000} for p in range(2000)],
}
# Plain JSON already (no datetimes, tuples or non-string keys): encoded once, not read back first.
PLAIN_DETAILS: dict[str, Any] = {
    **{key: value for key, value in AWKWARD_DETAILS.items() if key != "moment"},
    "columns": {"topic": AWKWARD_TEXT * 50, "offset": list(range(450)), "error_code": [None, 3] * 225},
}
IST = timezone(timedelta(hours=5, minutes=30))
EVENTS = [
    NewEvent("deletion.requested", "User:zoë", "::1", "r-1", "démo", "0b0a", AWKWARD_DETAILS,
             datetime(2026, 11, 22, 17, 30, 0, 123456, tzinfo=IST)),
    NewEvent("authz.denied", "User:a", None, None, None, None, {},
             datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)),
    NewEvent("deletion.partition_failed", "Service:x", None, "r-2", "demo", "0b0a",
             {"error_message": "\u2028" + AWKWARD_TEXT[4], "attempts": 3},
             datetime(2026, 11, 22, 12, 0, 0, 999999, tzinfo=UTC)),
    NewEvent("deletion.completed", "Service:x", None, "r-2", "demo", "0b0a", {"texts": AWKWARD_TEXT[::-1]},
             datetime(2026, 11, 22, 12, 0, 1, 1, tzinfo=UTC)),
    NewEvent("deletion.completed", "Service:x", None, "r-3", "démo", "0b0b", PLAIN_DETAILS,
             datetime(2026, 11, 22, 12, 0, 2, tzinfo=UTC)),
]  # fmt: skip


@asynccontextmanager
async def chain_on(url: str) -> AsyncIterator[Sessions]:
    await upgrade(url)
    engine = create_engine(url)
    try:
        yield make_sessionmaker(engine)
    finally:
        await engine.dispose()


async def stored(sessionmaker: Sessions) -> list[AuditEvent]:
    async with read_session(sessionmaker) as session:
        return list((await session.execute(select(AuditEvent).order_by(AuditEvent.id))).scalars())


async def verified(sessionmaker: Sessions) -> tuple[bool, int]:
    async with read_session(sessionmaker) as session:
        result = await verify_chain(session, chunk_size=50)
    assert result.reason is None
    return result.ok, result.checked


def row(event: AuditEvent) -> tuple[Any, ...]:
    return (event.id, event.prev_hash, event.hash, *event_content(event).values())


async def test_the_same_events_get_the_same_hashes_on_both_databases(
    postgresql_url: str, tmp_path: Path
) -> None:
    rows: dict[str, list[tuple[Any, ...]]] = {}
    for url in (f"sqlite+aiosqlite:///{tmp_path / 'purge.db'}", postgresql_url):
        async with chain_on(url) as sessionmaker:
            async with write_transaction(sessionmaker) as session:
                first = EVENTS[0]
                returned = [
                    await append_event(
                        session,
                        NewEvent(
                            action=first.action,
                            principal=first.principal,
                            client_host=first.client_host,
                            request_id=first.request_id,
                            cluster=first.cluster,
                            deletion_id=first.deletion_id,
                            details=first.details,
                            occurred_at=first.occurred_at,
                        ),
                    )
                ]
            async with write_transaction(sessionmaker) as session:
                returned += await append_events(session, EVENTS[1:])
            events = await stored(sessionmaker)
            assert [row(e) for e in events] == [row(e) for e in returned]
            assert all(chain_hash(e.prev_hash, event_content(e)) == e.hash for e in events)
            assert await verified(sessionmaker) == (True, len(EVENTS))
            rows[url.split(":")[0]] = [row(e) for e in events]
    assert rows["sqlite+aiosqlite"] == rows["postgresql+asyncpg"]
    assert rows["postgresql+asyncpg"][0][4] == "2026-11-22T12:00:00.123456Z"


async def test_a_batch_appends_its_events_in_order(sessionmaker: Sessions) -> None:
    async with write_transaction(sessionmaker) as session:
        assert await append_events(session, []) == []
        [single] = await append_events(session, EVENTS[1:2])
        batch = await append_events(session, EVENTS)
    assert [e.id for e in (single, *batch)] == list(range(1, len(EVENTS) + 2))
    assert [e.action for e in batch] == [e.action for e in EVENTS]
    assert [e.prev_hash for e in batch] == [single.hash, *(e.hash for e in batch[:-1])]
    assert [row(e) for e in await stored(sessionmaker)] == [row(e) for e in (single, *batch)]
    assert await verified(sessionmaker) == (True, len(EVENTS) + 1)


def test_the_hash_of_the_rendered_details_is_the_chain_hash() -> None:
    prev_hash = "ab" * 32
    for event_id, new in zip((1, 10, 2**63 - 1, 42, 99), EVENTS, strict=True):
        event = AuditEvent(
            id=event_id,
            occurred_at=new.occurred_at,
            principal=new.principal,
            client_host=new.client_host,
            request_id=new.request_id,
            action=new.action,
            cluster=new.cluster,
            deletion_id=new.deletion_id,
            details=new.details,
        )
        expected = chain_hash(prev_hash, event_content(event))
        assert event_hash(prev_hash, event, canonical_json(new.details)) == expected
        prev_hash = expected


async def test_many_events_in_one_call_chain_in_order(sessionmaker: Sessions) -> None:
    async with write_transaction(sessionmaker) as session:
        [first] = await append_events(session, EVENTS[1:2])
    many = [
        NewEvent("deletion.partition_failed", "Service:x", None, f"r-{i}", "démo", "0b0a",
                 {"partition": i, "error_message": AWKWARD_TEXT[i % len(AWKWARD_TEXT)]})
        for i in range(3000)
    ]  # fmt: skip
    async with write_transaction(sessionmaker) as session:
        batch = await append_events(session, many)
    assert [e.id for e in batch] == list(range(2, 3002))
    assert [e.prev_hash for e in batch] == [first.hash, *(e.hash for e in batch[:-1])]
    assert [row(e) for e in await stored(sessionmaker)] == [row(e) for e in (first, *batch)]
    assert await verified(sessionmaker) == (True, 3001)
    async with read_session(sessionmaker) as session:
        head = (await session.execute(select(AuditHead))).scalar_one()
    assert (head.last_event_id, head.last_hash) == (batch[-1].id, batch[-1].hash)


async def test_a_big_details_reads_back_equal_and_verifies(sessionmaker: Sessions) -> None:
    n = 20_000
    details: dict[str, Any] = {
        "status": "succeeded",
        "partitions": {
            "topic": [f'tópic-"{i % 7}"\\日本\u2028🧹' for i in range(n)],
            "partition": list(range(n)),
            "error_message": [None if i % 3 else 'quote " backslash \\ tab \t' for i in range(n)],
        },
        "texts": AWKWARD_TEXT,
    }
    details_json = canonical_json(details)
    assert len(details_json.encode()) > 800_000
    big = NewEvent("deletion.completed", "Service:x", None, "r-1", "démo", "0b0a", details)
    async with write_transaction(sessionmaker) as session:
        returned = await append_events(session, [EVENTS[1], big, EVENTS[2]])
    events = await stored(sessionmaker)
    assert [row(e) for e in events] == [row(e) for e in returned]
    assert events[1].details == details
    assert events[1].hash == chain_hash(events[0].hash, event_content(events[1]))
    assert await verified(sessionmaker) == (True, 3)
    async with read_session(sessionmaker) as session:
        if session.get_bind().dialect.name == "postgresql":
            # Stored as the canonical JSON text that was hashed, byte for byte.
            query = text("SELECT CAST(details AS text) FROM audit_event WHERE id = 2")
            assert (await session.execute(query)).scalar_one() == details_json


async def test_text_utf_8_cannot_encode_is_refused_and_leaves_no_trace(sessionmaker: Sessions) -> None:
    async with write_transaction(sessionmaker) as session:
        await append_events(session, EVENTS[1:2])
    lone_surrogate = NewEvent("x.y", "User:a", None, None, None, None, {"s": "\ud800"})
    with pytest.raises(Exception) as refused:  # noqa: PT011 - each driver wraps the encoding error its way
        async with write_transaction(sessionmaker) as session:
            await append_events(session, [EVENTS[2], lone_surrogate])
    causes = [refused.value]
    while causes[-1].__cause__ is not None:
        causes.append(causes[-1].__cause__)
    assert any(isinstance(cause, UnicodeEncodeError) for cause in causes)
    assert await verified(sessionmaker) == (True, 1)


async def _append_then(sessionmaker: Sessions, count: int, *, commit: bool, tag: str) -> list[AuditEvent]:
    events = [NewEvent("x.y", "User:a", None, f"{tag}-{i}", None, None, {"i": i}) for i in range(count)]
    async with sessionmaker() as session:
        appended = await append_events(session, events)
        await (session.commit() if commit else session.rollback())
    return appended


async def _lock_waiters(sessionmaker: Sessions) -> int:
    query = text(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    async with read_session(sessionmaker) as session:
        return int((await session.execute(query)).scalar_one())


@pytest.mark.parametrize("holder_commits", [True, False], ids=["holder-commits", "holder-rolls-back"])
@pytest.mark.parametrize("waiting", [1, 3], ids=["one-waiting", "batch-waiting"])
async def test_a_waiting_appender_chains_to_what_the_holder_left(
    postgresql_url: str, holder_commits: bool, waiting: int
) -> None:
    """Under READ COMMITTED the waiter's statement started before the holder committed, yet it hashes on
    the head the holder committed (or, after a rollback, the one before it)."""
    async with chain_on(postgresql_url) as sessionmaker:
        await _append_then(sessionmaker, 1, commit=True, tag="before")
        async with sessionmaker() as holder:
            [held] = await append_events(holder, [NewEvent("x.held", "User:a", None, None, None, None, {})])
            waiter = asyncio.create_task(_append_then(sessionmaker, waiting, commit=True, tag="waiter"))
            while await _lock_waiters(sessionmaker) == 0:
                assert not waiter.done(), "the waiter did not wait for the head lock"
                await asyncio.sleep(0.01)
            await (holder.commit() if holder_commits else holder.rollback())
        appended = await waiter
        if holder_commits:
            assert (appended[0].id, appended[0].prev_hash) == (held.id + 1, held.hash)
        else:
            assert (appended[0].id, appended[0].prev_hash) == (held.id, held.prev_hash)
        assert [row(e) for e in await stored(sessionmaker)][-waiting:] == [row(e) for e in appended]
        assert await verified(sessionmaker) == (True, 1 + holder_commits + waiting)


async def test_concurrent_appenders_with_rollbacks_leave_one_chain_without_gaps(postgresql_url: str) -> None:
    async with chain_on(postgresql_url) as sessionmaker:

        async def worker(w: int) -> int:
            committed = 0
            for k in range(8):
                commit = (w + k) % 4 != 0
                await _append_then(sessionmaker, k % 3 + 1, commit=commit, tag=f"w{w}-{k}")
                committed += (k % 3 + 1) * commit
            return committed

        committed = sum(await asyncio.gather(*(worker(w) for w in range(16))))
        assert await verified(sessionmaker) == (True, committed)
        async with read_session(sessionmaker) as session:
            head = (await session.execute(select(AuditHead))).scalar_one()
            prevs = (
                await session.execute(select(func.count(func.distinct(AuditEvent.prev_hash))))
            ).scalar_one()
        assert (head.last_event_id, prevs) == (committed, committed)
