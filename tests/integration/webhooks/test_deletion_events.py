"""The deletion use cases write their webhook events: a large deletion (stored by group commit) has its
``deletion.accepted`` row, and its end its ``deletion.succeeded`` row, each with the CloudEvent of that
moment; a webhook that does not subscribe to a type gets none."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from helpers.api import deletion_body, wait_until
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.session import read_session
from app.adapters.db.webhook_models import WebhookDelivery

Maker = async_sessionmaker[AsyncSession]
LARGE = 1_000  # partitions


async def rows_of(sessionmaker: Maker, deletion_id: str) -> list[WebhookDelivery]:
    query = select(WebhookDelivery).where(WebhookDelivery.deletion_id == deletion_id)
    async with read_session(sessionmaker) as session:
        return list((await session.execute(query)).scalars())


async def test_a_large_deletion_writes_accepted_then_succeeded(
    app_client: httpx.AsyncClient, token: Callable[[str], Awaitable[str]], emulator: Any, sessionmaker: Maker
) -> None:
    emulator.create_topic("big", partitions=LARGE, replication_factor=3)
    alice = {"Authorization": f"Bearer {await token('alice')}"}
    subscribed = {
        "cluster": "demo",
        "url": "http://hooks.invalid/hook",
        "event_types": ["deletion.accepted", "deletion.succeeded"],
    }
    hooked = (await app_client.post("/v1/webhooks", json=subscribed, headers=alice)).json()["id"]
    outcomes_only = {**subscribed, "event_types": ["deletion.failed"]}
    assert (await app_client.post("/v1/webhooks", json=outcomes_only, headers=alice)).status_code == 201
    body = deletion_body(*(("big", p, 0) for p in range(LARGE)))
    response = await app_client.post("/v1/deletions", json=body, headers=alice)
    assert response.status_code == 202, response.text
    deletion_id = response.json()["id"]

    async def both() -> bool:
        return len(await rows_of(sessionmaker, deletion_id)) == 2

    await wait_until(both, within=60)
    rows = sorted(await rows_of(sessionmaker, deletion_id), key=lambda r: r.id)
    assert [(r.webhook_id, r.event_type) for r in rows] == [
        (hooked, "deletion.accepted"),
        (hooked, "deletion.succeeded"),
    ]
    accepted, succeeded = (json.loads(r.body) for r in rows)
    assert accepted["data"]["partitions"] == {"total": LARGE}
    assert accepted["data"]["requester"] == "User:alice"
    assert succeeded["data"]["status"] == "succeeded"
    assert succeeded["data"]["partitions"] == {
        "total": LARGE,
        "succeeded": LARGE,
    }
    assert succeeded["data"]["requester"] == "User:alice"
