"""The webhook outbox on both databases: which events become rows, claims under leases (concurrent
claimers never share a row, an expired lease is claimed again with a new fence), fenced outcomes,
dead-lettering and redelivery."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from datetime import UTC, datetime, timedelta

from helpers.webhooks import stored_webhook
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories import webhook_deliveries as repo
from app.adapters.db.repositories.webhook_deliveries import Outcome
from app.adapters.db.repositories.webhooks import enqueue_events
from app.adapters.db.session import create_engine, make_sessionmaker, read_session, write_transaction
from app.adapters.db.webhook_models import WebhookDelivery
from app.domain.webhook_events import DeletionEvent, EventType

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


async def add_webhook(
    sessionmaker: async_sessionmaker[AsyncSession],
    cluster: str = "demo",
    types: tuple[EventType, ...] = tuple(EventType),
    *,
    enabled: bool = True,
) -> str:
    return await stored_webhook(
        sessionmaker, "http://127.0.0.1:9/hook", cluster=cluster, types=types, enabled=enabled, created_at=NOW
    )


def event(event_type: EventType, cluster: str = "demo", deletion_id: str = "d-1") -> DeletionEvent:
    return DeletionEvent(
        event_type, deletion_id, cluster, "succeeded", {"total": 2, "succeeded": 2}, "User:a"
    )


async def deliveries(sessionmaker: async_sessionmaker[AsyncSession]) -> list[WebhookDelivery]:
    async with read_session(sessionmaker) as session:
        return list((await session.execute(select(WebhookDelivery).order_by(WebhookDelivery.id))).scalars())


async def enqueue(sessionmaker: async_sessionmaker[AsyncSession], *events: DeletionEvent) -> int:
    async with write_transaction(sessionmaker) as session:
        return await enqueue_events(session, events, NOW)


async def test_no_webhook_no_row(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    assert await enqueue(sessionmaker, event(EventType.ACCEPTED)) == 0
    assert await deliveries(sessionmaker) == []


async def test_one_row_per_event_per_subscribed_webhook(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    everything = await add_webhook(sessionmaker)
    outcomes = await add_webhook(sessionmaker, types=(EventType.SUCCEEDED, EventType.FAILED))
    await add_webhook(sessionmaker, cluster="other")
    await add_webhook(sessionmaker, enabled=False)
    written = await enqueue(sessionmaker, event(EventType.ACCEPTED), event(EventType.SUCCEEDED))
    assert written == 3
    rows = await deliveries(sessionmaker)
    assert sorted((r.webhook_id, r.event_type) for r in rows) == sorted(
        [
            (everything, "deletion.accepted"),
            (everything, "deletion.succeeded"),
            (outcomes, "deletion.succeeded"),
        ]
    )
    # One CloudEvent per event, the same id and body for every webhook that takes it.
    succeeded = [r for r in rows if r.event_type == "deletion.succeeded"]
    assert len({(r.event_id, r.body) for r in succeeded}) == 1
    document = json.loads(succeeded[0].body)
    assert document["specversion"] == "1.0"
    assert document["type"] == "io.kafka-purge.deletion.succeeded"
    assert document["id"] == succeeded[0].event_id
    assert document["subject"] == "d-1"
    assert document["data"] == {
        "deletion_id": "d-1",
        "cluster": "demo",
        "status": "succeeded",
        "partitions": {"total": 2, "succeeded": 2},
        "requester": "User:a",
    }
    assert {(r.status, r.attempts, r.next_attempt_at) for r in rows} == {("pending", 0, NOW)}


async def test_rows_roll_back_with_the_change(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    await add_webhook(sessionmaker)
    try:
        async with write_transaction(sessionmaker) as session:
            await enqueue_events(session, [event(EventType.ACCEPTED)], NOW)
            raise RuntimeError("the change fails")
    except RuntimeError:
        pass
    assert await deliveries(sessionmaker) == []


async def claim(
    sessionmaker: async_sessionmaker[AsyncSession], owner: str, now: datetime, limit: int = 10
) -> list[repo.ClaimedDelivery]:
    async with write_transaction(sessionmaker) as session:
        return await repo.claim_due(session, owner=owner, now=now, lease_seconds=30, limit=limit)


async def test_leases_fences_and_outcomes(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    await add_webhook(sessionmaker)
    await enqueue(sessionmaker, *(event(EventType.ACCEPTED, deletion_id=f"d-{i}") for i in range(3)))
    first = await claim(sessionmaker, "a", NOW, limit=2)
    second = await claim(sessionmaker, "b", NOW + timedelta(seconds=10))  # its lease runs 10 s longer
    assert (len(first), len(second)) == (2, 1)
    assert not {c.id for c in first} & {c.id for c in second}
    assert await claim(sessionmaker, "c", NOW) == []  # every lease is live
    async with read_session(sessionmaker) as session:
        assert not await repo.any_due(session, NOW)
    # "a" died: after its leases ran out, "c" claims its rows again, with a new fence.
    later = NOW + timedelta(seconds=31)
    again = await claim(sessionmaker, "c", later)
    assert {c.id for c in again} == {c.id for c in first}
    assert {(c.fence, c.attempts) for c in again} == {(2, 2)}
    stale = [Outcome(c.id, c.fence, True, 204, None, None) for c in first]
    fresh = [
        Outcome(again[0].id, again[0].fence, True, 204, None, None),
        Outcome(again[1].id, again[1].fence, False, 500, "HTTP 500", later + timedelta(seconds=5)),
        Outcome(second[0].id, second[0].fence, False, None, "ConnectError: refused", None),
    ]
    async with write_transaction(sessionmaker) as session:
        assert await repo.record_outcomes(session, stale, later) == 0
        assert await repo.record_outcomes(session, fresh, later) == 3
    rows = {r.id: r for r in await deliveries(sessionmaker)}
    assert (rows[again[0].id].status, rows[again[0].id].delivered_at) == ("delivered", later)
    retried = rows[again[1].id]
    assert (retried.status, retried.last_status_code, retried.lease_expires_at) == ("pending", 500, None)
    assert retried.next_attempt_at == later + timedelta(seconds=5)
    assert (rows[second[0].id].status, rows[second[0].id].last_error) == ("dead", "ConnectError: refused")
    assert await claim(sessionmaker, "d", later) == []  # the retry is not due yet
    assert [c.id for c in await claim(sessionmaker, "d", later + timedelta(seconds=5))] == [retried.id]
    # A dead delivery redelivered on request: a fresh round, a new fence, due now.
    async with write_transaction(sessionmaker) as session:
        dead = await repo.get_delivery(session, rows[second[0].id].webhook_id, second[0].id)
        assert dead is not None
        await repo.redeliver(session, dead, later)
    (redelivered,) = await claim(sessionmaker, "e", later)
    assert (redelivered.id, redelivered.attempts, redelivered.fence) == (second[0].id, 1, second[0].fence + 2)


async def test_concurrent_claimers_never_share_a_delivery(migrated_url: str) -> None:
    engines = [create_engine(migrated_url, pool_size=2) for _ in range(3)]
    try:
        makers = [make_sessionmaker(engine) for engine in engines]
        await add_webhook(makers[0])
        await enqueue(makers[0], *(event(EventType.ACCEPTED, deletion_id=f"d-{i}") for i in range(300)))
        seen: dict[str, list[int]] = {f"w{i}": [] for i in range(3)}

        async def claimer(maker: async_sessionmaker[AsyncSession], owner: str) -> None:
            while claimed := await claim(maker, owner, NOW, limit=7):
                seen[owner].extend(c.id for c in claimed)
                await asyncio.sleep(0)

        await asyncio.gather(*(claimer(maker, owner) for maker, owner in zip(makers, seen, strict=True)))
        counted = Counter(i for ids in seen.values() for i in ids)
        assert (len(counted), max(counted.values())) == (300, 1)
        async with read_session(makers[0]) as session:
            owners = select(func.count(func.distinct(WebhookDelivery.lease_owner)))
            assert (await session.execute(owners)).scalar_one() >= 1
    finally:
        for engine in engines:
            await engine.dispose()
