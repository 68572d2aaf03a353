"""Cancelling pending partitions, and reading and verifying the audit trail over HTTP."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import httpx
import pytest
from helpers.api import assert_problem, deletion_body
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import PartitionDeletion
from app.adapters.db.session import write_transaction


@pytest.fixture
def run_executor() -> bool:
    return False


async def _submit(client: httpx.AsyncClient, headers: dict[str, str], orders: str) -> str:
    body = deletion_body((orders, 0, 1), (orders, 1, 2), (orders, 2, -1))
    response = await client.post("/v1/deletions", json=body, headers=headers)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


async def test_cancel_pending_partitions(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str
) -> None:
    deletion_id = await _submit(app_client, alice, orders)
    response = await app_client.post(f"/v1/deletions/{deletion_id}/cancel", headers=alice)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "cancelled"
    assert body["counts"] == {"cancelled": 3}
    assert body["finished_at"] is not None
    assert_problem(await app_client.post(f"/v1/deletions/{deletion_id}/cancel", headers=alice), 409)

    events = (await app_client.get("/v1/audit?action=deletion.cancelled", headers=alice)).json()["items"]
    assert len(events) == 1
    assert events[0]["deletion_id"] == deletion_id
    assert events[0]["details"]["cancelled"] == [{"topic": orders, "partition": p} for p in (0, 1, 2)]


async def test_cancel_skips_partitions_leased_by_a_worker(
    app_client: httpx.AsyncClient,
    alice: dict[str, str],
    orders: str,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    deletion_id = await _submit(app_client, alice, orders)
    async with write_transaction(sessionmaker) as session:
        await session.execute(
            update(PartitionDeletion)
            .where(PartitionDeletion.deletion_id == deletion_id, PartitionDeletion.partition == 1)
            .values(lease_owner="worker-1", lease_expires_at=datetime.now(UTC) + timedelta(minutes=5))
        )
    body = (await app_client.post(f"/v1/deletions/{deletion_id}/cancel", headers=alice)).json()
    statuses = {p["partition"]: p["status"] for p in body["partitions"]}
    assert statuses == {0: "cancelled", 1: "pending", 2: "cancelled"}
    assert body["status"] == "in_progress"
    assert body["finished_at"] is None


async def test_audit_lists_events_in_chain_order(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str
) -> None:
    first = await _submit(app_client, alice, orders)
    second = await _submit(app_client, alice, orders)
    await app_client.post(f"/v1/deletions/{first}/cancel", headers={**alice, "X-Request-ID": "req-cancel-1"})

    events = (await app_client.get("/v1/audit?limit=2", headers=alice)).json()
    assert [e["action"] for e in events["items"]] == ["deletion.requested", "deletion.requested"]
    assert [e["deletion_id"] for e in events["items"]] == [first, second]
    requested = events["items"][0]
    assert requested["principal"] == "User:alice"
    assert requested["client_host"] == "127.0.0.1"
    assert requested["details"]["reason"] == "test erasure"
    columns = requested["details"]["partitions"]
    assert {key: values[2] for key, values in columns.items()} == {
        "topic": orders, "partition": 2, "requested_offset": -1, "resolved_offset": 30, "spec": 2,
    }  # fmt: skip
    assert requested["details"]["specs"] == [{"offset": 1}, {"offset": 2}, {"offset": -1}]
    rest = (await app_client.get(f"/v1/audit?cursor={events['next_cursor']}", headers=alice)).json()
    assert [(e["action"], e["request_id"]) for e in rest["items"]] == [("deletion.cancelled", "req-cancel-1")]
    assert rest["next_cursor"] is None

    future = quote((datetime.now(UTC) + timedelta(hours=1)).isoformat())
    assert (await app_client.get(f"/v1/audit?since={future}", headers=alice)).json()["items"] == []
    assert_problem(await app_client.get("/v1/audit?since=2026-01-01T00:00:00", headers=alice), 422)


async def test_audit_verify_reports_the_first_broken_link(
    app_client: httpx.AsyncClient,
    alice: dict[str, str],
    orders: str,
    tamper: Callable[[str], Awaitable[None]],
) -> None:
    for _ in range(3):
        await _submit(app_client, alice, orders)
    verify = (await app_client.get("/v1/audit/verify", headers=alice)).json()
    assert verify == {
        "ok": True,
        "checked": 3,
        "first_broken_id": None,
        "reason": None,
        "head_event_id": 3,
        "checkpoints_enabled": False,  # no signing key in the tests' settings
        "checkpoints_checked": 0,
        "checkpoint": None,
    }

    await tamper("UPDATE audit_event SET principal = 'User:mallory' WHERE id = 2")
    verify = (await app_client.get("/v1/audit/verify", headers=alice)).json()
    assert (verify["ok"], verify["checked"], verify["first_broken_id"]) == (False, 1, 2)
