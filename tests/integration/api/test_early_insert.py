"""Large deletions of concrete offsets are inserted while the cluster is still asked about them
(``app.services.deletions.early``, PostgreSQL only): committed with their event when the checks pass,
rolled back without a trace when they refuse the request. On SQLite the same requests are stored the
usual way, with the same answers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from helpers.api import PROBLEM, assert_problem, deletion_body, wait_until
from helpers.deletion_rows import new_deletion, offsets
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import AuditEvent, Deletion, PartitionDeletion
from app.adapters.db.repositories.deletions import PlannedPartition
from app.adapters.db.session import read_session
from app.audit import NewEvent, verify_chain
from app.main import create_app
from app.services.deletions.early import EARLY_MIN_PARTITIONS, EarlyInsert, stores_early
from app.settings import Settings

Maker = async_sessionmaker[AsyncSession]
TOPIC_PARTITIONS = EARLY_MIN_PARTITIONS + 10


def is_postgresql(sessionmaker: Maker) -> bool:
    return bool(sessionmaker.kw["bind"].dialect.name == "postgresql")


@pytest.fixture
async def big(emulator: Any) -> str:
    """An empty topic with more partitions than an early insert needs (offset 0 deletes nothing)."""
    emulator.create_topic("big", partitions=TOPIC_PARTITIONS, replication_factor=3)
    return "big"


async def _counts(sessionmaker: Maker) -> tuple[int, int, int]:
    async with read_session(sessionmaker) as session:
        deletions = await session.scalar(select(func.count()).select_from(Deletion))
        partitions = await session.scalar(select(func.count()).select_from(PartitionDeletion))
        events = await session.scalar(
            select(func.count()).select_from(AuditEvent).where(AuditEvent.action == "deletion.requested")
        )
    return deletions or 0, partitions or 0, events or 0


async def test_large_deletion_is_stored_with_its_event_and_sent(
    app_client: httpx.AsyncClient, alice: dict[str, str], big: str, sessionmaker: Maker
) -> None:
    body = deletion_body(*((big, p, 0) for p in range(EARLY_MIN_PARTITIONS)))
    response = await app_client.post("/v1/deletions", json=body, headers=alice)
    assert response.status_code == 202, response.text
    deletion_id = response.json()["id"]

    async def finished() -> bool:
        found = await app_client.get(f"/v1/deletions/{deletion_id}", headers=alice)
        return found.json()["status"] == "succeeded"

    await wait_until(finished, within=30)
    assert await _counts(sessionmaker) == (1, EARLY_MIN_PARTITIONS, 1)
    async with read_session(sessionmaker) as session:
        event = (
            await session.execute(select(AuditEvent).where(AuditEvent.action == "deletion.requested"))
        ).scalar_one()
        assert event.deletion_id == deletion_id
        assert event.details["partitions"]["partition"] == list(range(EARLY_MIN_PARTITIONS))
        assert (await verify_chain(session)).ok


@pytest.mark.parametrize(
    ("refused", "status"), [("unknown partition", 404), ("above the high watermark", 409), ("duplicate", 422)]
)
async def test_refused_large_deletion_leaves_nothing(
    app_client: httpx.AsyncClient,
    alice: dict[str, str],
    big: str,
    sessionmaker: Maker,
    refused: str,
    status: int,
) -> None:
    entries = [(big, p, 0) for p in range(EARLY_MIN_PARTITIONS)]
    if refused == "unknown partition":
        entries[-1] = (big, TOPIC_PARTITIONS + 5, 0)  # refused only once the cluster answered
    elif refused == "above the high watermark":
        entries[-1] = (big, EARLY_MIN_PARTITIONS - 1, 3)  # the topic is empty: its high watermarks are 0
    else:
        entries[-1] = entries[0]
    response = await app_client.post("/v1/deletions", json=deletion_body(*entries), headers=alice)
    assert_problem(response, status)
    assert await _counts(sessionmaker) == (0, 0, 0)


async def test_large_replay_answers_with_the_first_deletion(
    app_client: httpx.AsyncClient, alice: dict[str, str], big: str, sessionmaker: Maker
) -> None:
    body = deletion_body(*((big, p, 0) for p in range(EARLY_MIN_PARTITIONS)))
    headers = {**alice, "Idempotency-Key": "big-1"}
    first = await app_client.post("/v1/deletions", json=body, headers=headers)
    again = await app_client.post("/v1/deletions", json=body, headers=headers)
    assert (first.status_code, again.status_code) == (202, 202)
    assert again.json()["id"] == first.json()["id"]
    assert again.headers["Idempotent-Replayed"] == "true"
    assert await _counts(sessionmaker) == (1, EARLY_MIN_PARTITIONS, 1)


async def test_no_large_deletion_without_its_audit_event(
    settings: Settings,
    emulator: Any,
    big: str,
    tamper: Callable[[str], Awaitable[None]],
    sessionmaker: Maker,
    alice_token_for: Callable[[httpx.AsyncClient], Awaitable[dict[str, str]]],
) -> None:
    """The early insert's append fails, so does storing it the usual way: a 503 and nothing stored."""
    app = create_app(settings, run_executor=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            headers = await alice_token_for(client)
            await tamper("DELETE FROM audit_head")
            body = deletion_body(*((big, p, 0) for p in range(EARLY_MIN_PARTITIONS)))
            response = await client.post("/v1/deletions", json=body, headers=headers)
    assert response.status_code == 503
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["type"] == "/problems/audit-chain-broken"
    async with read_session(sessionmaker) as session:
        assert await session.scalar(select(func.count()).select_from(Deletion)) == 0
        assert await session.scalar(select(func.count()).select_from(PartitionDeletion)) == 0


def _deletion(partitions: int) -> tuple[Deletion, list[PlannedPartition]]:
    planned = offsets("big", partitions, 0)
    return new_deletion(planned), planned


async def _requested_details(sessionmaker: Maker, deletion: Deletion) -> Any:
    async with read_session(sessionmaker) as session:
        return await session.scalar(
            select(AuditEvent.details).where(
                AuditEvent.deletion_id == deletion.id, AuditEvent.action == "deletion.requested"
            )
        )


def _event(deletion: Deletion) -> NewEvent:
    return NewEvent(
        action="deletion.requested",
        principal=deletion.principal,
        client_host=deletion.client_host,
        request_id=deletion.request_id,
        cluster=deletion.cluster,
        deletion_id=deletion.id,
        details={"reason": deletion.reason},
    )


async def test_an_early_insert_is_invisible_until_committed(sessionmaker: Maker) -> None:
    assert not stores_early(sessionmaker, EARLY_MIN_PARTITIONS - 1)  # small: group commit
    if not is_postgresql(sessionmaker):
        # One writer at a time: the write lock is never held while the cluster is asked.
        assert not stores_early(sessionmaker, EARLY_MIN_PARTITIONS)
        return
    assert stores_early(sessionmaker, EARLY_MIN_PARTITIONS)
    deletion, planned = _deletion(EARLY_MIN_PARTITIONS)
    early = EarlyInsert(sessionmaker, None, deletion, planned, gated=True)
    await asyncio.sleep(0.3)  # the insert runs meanwhile; the transaction waits for the verdict
    assert await _counts(sessionmaker) == (0, 0, 0)

    stored = await early.commit(list(planned), _event(deletion))
    assert stored is not None
    assert stored.created
    assert stored.deletion is deletion
    assert await _counts(sessionmaker) == (1, EARLY_MIN_PARTITIONS, 1)
    assert await _requested_details(sessionmaker, deletion) == {"reason": deletion.reason}

    other, other_planned = _deletion(EARLY_MIN_PARTITIONS)
    abandoned = EarlyInsert(sessionmaker, None, other, other_planned, gated=True)
    await abandoned.abandon()
    assert await _counts(sessionmaker) == (1, EARLY_MIN_PARTITIONS, 1)

    # The checks planned other partitions than were inserted: rolled back, left to the usual way.
    changed, changed_planned = _deletion(EARLY_MIN_PARTITIONS)
    mismatched = EarlyInsert(sessionmaker, None, changed, changed_planned, gated=True)
    assert await mismatched.commit(list(changed_planned[1:]), _event(changed)) is None
    assert await _counts(sessionmaker) == (1, EARLY_MIN_PARTITIONS, 1)
    async with read_session(sessionmaker) as session:
        assert (await verify_chain(session)).ok
