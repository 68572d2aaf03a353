"""Webhooks end to end: the service, the emulated cluster and a webhook receiver run as real processes.

The receiver (``helpers.webhook_receiver``) records every request and can answer 500 or hold its answers
back. Checked, on both databases: each deletion's ``accepted`` and ``succeeded`` CloudEvents arrive
signed (the HMAC is recomputed here, as a receiver would); after receiver errors the same event (same
``webhook-id``, same body) is retried until delivered; after ``max_attempts`` failures it is dead, listed
as such, and redelivered on request; deliveries in flight when the service is killed with SIGKILL are
delivered after the restart, once their leases ran out: no event is lost; and with loopback not opened,
the receiver can neither be registered nor reached by a webhook stored earlier, and a stored URL the
client cannot send to is dead-lettered like any failure, with nothing escaping into the log.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.service_processes import (
    Database,
    Emulator,
    Service,
    database_url,
    emulator_process,
    produce,
    service_env,
    start_service,
)
from helpers.webhook_receiver import Receiver, receiver_process, verified
from helpers.webhooks import stored_webhook
from sqlalchemy import select

from app.adapters.db.session import read_session
from app.adapters.db.webhook_models import WebhookDelivery
from app.domain.webhook_events import EventType
from app.worker.webhooks import REFUSED

pytestmark = pytest.mark.slow

WEBHOOKS = {
    "PURGE_WEBHOOKS_MAX_ATTEMPTS": "3",
    "PURGE_WEBHOOKS_BACKOFF_INITIAL_SECONDS": "0.2",
    "PURGE_WEBHOOKS_BACKOFF_MAX_SECONDS": "0.5",
    # The lease just outlasts an attempt: the in-flight test waits it out after the kill, and a loopback
    # receiver answers well within the timeout.
    "PURGE_WEBHOOKS_TIMEOUT_SECONDS": "3",
    "PURGE_WEBHOOKS_LEASE_SECONDS": "4",
    "PURGE_WEBHOOKS_POLL_INTERVAL_SECONDS": "0.1",
    # The receiver listens on loopback, which webhooks may reach only once it is opened.
    "PURGE_WEBHOOKS_ALLOWED_NETWORKS": "127.0.0.0/8",
}
Records = list[dict[str, Any]]
Deployment = tuple[dict[str, str], Database]
# Webhooks stored as an earlier configuration or version let them be registered, for one event type.
ACCEPTED = (EventType.ACCEPTED,)


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    """One emulator for the module's tests; each test deletes from a topic of its own (``topic``)."""
    with emulator_process(tmp_path_factory.mktemp("emulator"), "unused", 1) as running:
        yield running


@pytest.fixture
async def topic(emulator: Emulator) -> str:
    """A new topic of 2 partitions of 10 records, for this test only."""
    name = f"hooked-{secrets.token_hex(4)}"
    body = {"name": name, "partitions": 2, "replication_factor": 3}
    async with httpx.AsyncClient(timeout=10) as control:
        (await control.post(f"{emulator.control}/topics", json=body)).raise_for_status()
    await produce(emulator.bootstrap, name, 2, records=10)
    return name


@pytest.fixture
async def deployment(kind: str, tmp_path: Path, emulator: Emulator) -> AsyncIterator[Deployment]:
    """The service's environment on the module's emulator and a database of ``kind``, and a reader of it."""
    async with database_url(kind, tmp_path) as url:
        db = Database(url)
        try:
            yield {**service_env(url, emulator.bootstrap), **WEBHOOKS}, db
        finally:
            await db.close()


def api(service: Service) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {service.token()}"}
    return httpx.AsyncClient(base_url=str(service.base), headers=headers, timeout=30)


async def create_webhook(client: httpx.AsyncClient, receiver: Receiver) -> tuple[str, str]:
    body = {"cluster": "demo", "url": f"{receiver.url}/hook"}
    response = await client.post("/v1/webhooks", json=body)
    assert response.status_code == 201, response.text
    return response.json()["id"], response.json()["secret"]


async def delete(client: httpx.AsyncClient, topic: str, partition: int, offset: int) -> str:
    body = {
        "cluster": "demo",
        "partitions": [{"topic": topic, "partition": partition, "offset": offset}],
        "reason": "webhooks end to end",
    }
    response = await client.post("/v1/deletions", json=body)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def of(records: Records, deletion_id: str, secret: str) -> dict[str, Records]:
    """The recorded requests about ``deletion_id``, by event type, each signature verified."""
    found: dict[str, Records] = defaultdict(list)
    for record in records:
        event = verified(record, secret)
        if event["subject"] == deletion_id:
            found[event["type"].removeprefix("io.kafka-purge.deletion.")].append(record)
    return found


def answered(records: Records, deletion_id: str, secret: str) -> set[str]:
    """The event types about ``deletion_id`` the receiver answered 2xx."""
    return {kind for kind, found in of(records, deletion_id, secret).items() if found[-1]["status"] == 204}


async def delivery_rows(db: Database, deletion_id: str) -> list[WebhookDelivery]:
    query = select(WebhookDelivery).where(WebhookDelivery.deletion_id == deletion_id)
    async with read_session(db.sessionmaker) as session:
        return list((await session.execute(query)).scalars())


async def eventually(check: Any, timeout_s: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (result := await check()):
        assert time.monotonic() < deadline, "not reached in time"
        await asyncio.sleep(0.1)
    return result


@pytest.mark.timeout(180)
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_signed_delivery_retries_and_dead_letter(
    tmp_path: Path, deployment: Deployment, topic: str
) -> None:
    with receiver_process(tmp_path) as receiver:
        env, db = deployment
        service = start_service(env, tmp_path)
        try:
            async with api(service) as client:
                webhook_id, secret = await create_webhook(client, receiver)
                # Delivered and signed: the deletion's accepted and succeeded events.
                first = await delete(client, topic, 0, 1)
                records = receiver.wait_for(lambda r: answered(r, first, secret) == {"accepted", "succeeded"})
                (accepted,) = of(records, first, secret)["accepted"]
                event = verified(accepted, secret)
                assert accepted["headers"]["content-type"].startswith("application/cloudevents+json")
                assert accepted["headers"]["webhook-id"] == event["id"]
                assert (event["specversion"], event["source"]) == ("1.0", "urn:kafka-purge:cluster:demo")
                assert event["data"]["requester"] == "User:alice"
                (succeeded,) = of(records, first, secret)["succeeded"]
                ended = verified(succeeded, secret)["data"]
                assert (ended["partitions"], ended["requester"]) == (
                    {"total": 1, "succeeded": 1},
                    "User:alice",
                )

                # Two 500s: the events they answered are sent again, same id and body, until 2xx.
                receiver.fail_next(2)
                second = await delete(client, topic, 0, 2)
                records = receiver.wait_for(
                    lambda r: answered(r, second, secret) == {"accepted", "succeeded"}
                )
                attempts = [r for found in of(records, second, secret).values() for r in found]
                assert [r["status"] for r in attempts].count(500) == 2
                by_id: dict[str, set[str]] = defaultdict(set)
                for record in attempts:
                    by_id[record["headers"]["webhook-id"]].add(record["body"])
                assert len(by_id) == 2
                assert all(len(bodies) == 1 for bodies in by_id.values())

                # Every attempt fails: dead after 3, listed as dead, then redelivered on request.
                receiver.fail_next(1_000)
                third = await delete(client, topic, 1, 1)

                async def dead() -> list[dict[str, Any]]:
                    page = await client.get(
                        f"/v1/webhooks/{webhook_id}/deliveries", params={"status": "dead"}
                    )
                    items = [d for d in page.json()["items"] if d["deletion_id"] == third]
                    return items if len(items) == 2 else []

                gone = await eventually(dead)
                assert {(d["attempts"], d["last_status_code"]) for d in gone} == {(3, 500)}
                per_event = of(receiver.requests(), third, secret)
                assert {kind: len(found) for kind, found in per_event.items()} == {
                    "accepted": 3,
                    "succeeded": 3,
                }
                receiver.fail_next(0)
                retried = await client.post(f"/v1/webhooks/{webhook_id}/deliveries/{gone[0]['id']}/retry")
                assert retried.status_code == 202, retried.text
                kind_of = gone[0]["event_type"].removeprefix("deletion.")
                receiver.wait_for(lambda r: kind_of in answered(r, third, secret))
                rows = {r.id: r.status for r in await delivery_rows(db, third)}
                assert rows[gone[0]["id"]] in {"pending", "delivered"}
                await eventually(lambda: _status_is(db, third, gone[0]["id"], "delivered"), timeout_s=10)
        finally:
            service.process.kill()


async def _status_is(db: Database, deletion_id: str, delivery_id: int, status: str) -> bool:
    return any(r.id == delivery_id and r.status == status for r in await delivery_rows(db, deletion_id))


@pytest.mark.timeout(180)
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_deliveries_in_flight_at_kill_9_are_delivered_after_restart(
    tmp_path: Path, deployment: Deployment, topic: str
) -> None:
    with receiver_process(tmp_path) as receiver:
        env, db = deployment
        service = start_service(env, tmp_path)
        try:
            async with api(service) as client:
                _, secret = await create_webhook(client, receiver)
                receiver.hold(60)  # every answer held back: the attempts are in flight
                deletion_id = await delete(client, topic, 0, 3)
                receiver.wait_for(lambda r: set(of(r, deletion_id, secret)) == {"accepted", "succeeded"})
            service.process.kill()
            killed_at = time.time()
            receiver.hold(0)
            rows = await delivery_rows(db, deletion_id)
            assert len(rows) == 2
            assert {(r.status, r.attempts) for r in rows} == {("pending", 1)}
            assert all(r.lease_expires_at is not None for r in rows)
            service = start_service(env, tmp_path, workers_only=True)

            def delivered_after_kill(records: Records) -> bool:
                found = of(records, deletion_id, secret)
                return all(
                    any(r["received"] > killed_at and r["status"] == 204 for r in found.get(kind, []))
                    for kind in ("accepted", "succeeded")
                )

            records = receiver.wait_for(delivered_after_kill, timeout_s=60)
            # The same events again: receivers deduplicate on webhook-id.
            ids = {
                kind: {r["headers"]["webhook-id"] for r in found}
                for kind, found in of(records, deletion_id, secret).items()
            }
            assert all(len(found) == 1 for found in ids.values())
            await eventually(lambda: _all_delivered(db, deletion_id), timeout_s=20)
            assert await db.chain_ok()
        finally:
            service.process.kill()


async def _all_delivered(db: Database, deletion_id: str) -> bool:
    rows = await delivery_rows(db, deletion_id)
    return len(rows) == 2 and {(r.status, r.attempts, r.fence) for r in rows} == {("delivered", 2, 2)}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_loopback_is_closed_unless_opened(tmp_path: Path, deployment: Deployment, topic: str) -> None:
    with receiver_process(tmp_path) as receiver:
        env, db = deployment
        service = start_service({**env, "PURGE_WEBHOOKS_ALLOWED_NETWORKS": ""}, tmp_path)
        try:
            async with api(service) as client:
                body = {"cluster": "demo", "url": f"{receiver.url}/hook"}
                refused = await client.post("/v1/webhooks", json=body)
                assert refused.status_code == 422, refused.text
                assert [e["pointer"] for e in refused.json()["errors"]] == ["#/url"]
                port = receiver.url.rsplit(":", 1)[1]
                stored = {
                    await stored_webhook(db.sessionmaker, f"http://localhost:{port}/hook", types=ACCEPTED),
                    await stored_webhook(db.sessionmaker, f"http://0x7f000001:{port}/hook", types=ACCEPTED),
                    await stored_webhook(
                        db.sessionmaker, "http://127.0.0.2\t.hooks.internal/", types=ACCEPTED
                    ),
                }
                deletion_id = await delete(client, topic, 0, 1)

                async def all_dead() -> list[WebhookDelivery]:
                    rows = await delivery_rows(db, deletion_id)
                    return rows if len(rows) == 3 and all(r.status == "dead" for r in rows) else []

                rows = await eventually(all_dead)
                assert {r.webhook_id for r in rows} == stored
                assert {(r.attempts, r.last_status_code, r.last_error) for r in rows} == {(3, None, REFUSED)}
                assert receiver.requests() == []
        finally:
            service.process.kill()
        log = "".join(service.process.lines)
        assert "Task exception was never retrieved" not in log
        assert "Traceback" not in log
