"""/v1/webhooks over HTTP (both databases): targets refused as problem+json, the secret shown once and
never read back, the allow-list, every change audited, deliveries listed and redelivered."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from helpers.api import assert_problem
from helpers.worker import Target, insert_deletion
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import PartitionDeletion
from app.adapters.db.repositories.webhooks import enqueue_events
from app.adapters.db.session import create_engine, make_sessionmaker, read_session, write_transaction
from app.adapters.db.webhook_models import Webhook
from app.domain.webhook_events import DeletionEvent, EventType
from app.settings import ClusterSettings, Settings, WebhookSettings

Token = Callable[[str], Awaitable[str]]
PROBLEM = "application/problem+json"


@pytest.fixture
def run_executor() -> bool:
    return False


@pytest.fixture
def clusters() -> dict[str, ClusterSettings]:
    # Never reached: managing webhooks asks nothing of the cluster.
    return {"demo": ClusterSettings(bootstrap_servers="127.0.0.1:9", request_timeout_ms=1_000)}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    allowed = WebhookSettings(allowed_hosts="*.example.com")
    return settings.model_copy(update={"webhooks": allowed})


async def headers(token: Token) -> dict[str, str]:
    return {"Authorization": f"Bearer {await token('alice')}"}


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://hooks.example.com/hook", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("javascript:alert(1)", "only http and https"),
        ("http://user:pw@hooks.example.com/hook", "credentials"),
        ("http:///nohost", "needs a host"),
        ("https://hooks.example.org/x", "PURGE_WEBHOOKS_ALLOWED_HOSTS"),
        ("http://10.0.0.1/x", "PURGE_WEBHOOKS_ALLOWED_HOSTS"),
    ],
)
async def test_a_refused_target_is_a_422_problem(
    app_client: httpx.AsyncClient, token: Token, url: str, why: str
) -> None:
    body = {"cluster": "demo", "url": url}
    response = await app_client.post("/v1/webhooks", json=body, headers=await headers(token))
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    problem = response.json()
    assert why in str(problem)
    assert [e["pointer"] for e in problem["errors"]] == ["#/url"]


async def test_bad_secret_and_event_type(app_client: httpx.AsyncClient, token: Token) -> None:
    auth = await headers(token)
    bodies: list[tuple[dict[str, Any], str]] = [
        ({"secret": "not-whsec"}, "#/secret"),
        ({"secret": "whsec_c2hvcnQ="}, "#/secret"),
        ({"event_types": ["deletion.exploded"]}, "#/event_types/0"),
    ]
    for extra, pointer in bodies:
        body = {"cluster": "demo", "url": "https://hooks.example.com/hook", **extra}
        response = await app_client.post("/v1/webhooks", json=body, headers=auth)
        assert response.status_code == 422, response.text
        assert pointer in [e["pointer"] for e in response.json()["errors"]], response.text


async def test_an_unknown_cluster_is_not_found(app_client: httpx.AsyncClient, token: Token) -> None:
    """A schema-valid body naming a cluster the service does not have: 404 naming it, nothing stored."""
    auth = await headers(token)
    body = {"cluster": "nowhere", "url": "https://hooks.example.com/hook"}
    response = await app_client.post("/v1/webhooks", json=body, headers=auth)
    problem = assert_problem(response, 404)
    assert problem["type"] == "/problems/cluster-not-found"
    assert problem["detail"] == "Unknown cluster 'nowhere'."
    assert problem["errors"] == [{"pointer": "#/cluster", "detail": "not a configured cluster"}]
    assert (await app_client.get("/v1/webhooks", headers=auth)).json()["items"] == []


async def test_the_secret_is_shown_once_and_changes_are_audited(
    app_client: httpx.AsyncClient, token: Token
) -> None:
    auth = await headers(token)
    body = {
        "cluster": "demo",
        "url": "https://hooks.example.com/purge",
        "event_types": ["deletion.succeeded"],
    }
    created = await app_client.post("/v1/webhooks", json=body, headers=auth)
    assert created.status_code == 201, created.text
    webhook = created.json()
    assert webhook["secret"].startswith("whsec_")
    assert created.headers["location"] == f"/v1/webhooks/{webhook['id']}"
    read = (await app_client.get(f"/v1/webhooks/{webhook['id']}", headers=auth)).json()
    assert "secret" not in read
    assert read["event_types"] == ["deletion.succeeded"]
    listed = (await app_client.get("/v1/webhooks", headers=auth)).json()["items"]
    assert [w["id"] for w in listed] == [webhook["id"]]
    assert all("secret" not in w for w in listed)
    assert (await app_client.get("/v1/webhooks", params={"cluster": "x"}, headers=auth)).json()["items"] == []
    given = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
    patch = {"enabled": False, "secret": given}
    changed = await app_client.patch(f"/v1/webhooks/{webhook['id']}", json=patch, headers=auth)
    assert changed.status_code == 200, changed.text
    assert changed.json()["enabled"] is False
    assert "secret" not in changed.json()
    deleted = await app_client.delete(f"/v1/webhooks/{webhook['id']}", headers=auth)
    assert deleted.status_code == 204
    assert (await app_client.get(f"/v1/webhooks/{webhook['id']}", headers=auth)).status_code == 404
    audit = (await app_client.get("/v1/audit", params={"limit": 100}, headers=auth)).json()["items"]
    actions = [e["action"] for e in audit if e["action"].startswith("webhook.")]
    assert sorted(actions) == ["webhook.created", "webhook.deleted", "webhook.updated"]
    text = str(audit)
    assert webhook["secret"] not in text
    assert given not in text
    updated = next(e for e in audit if e["action"] == "webhook.updated")
    assert updated["details"]["changed"] == ["enabled", "secret"]


async def test_deliveries_are_listed_and_redelivered(
    app_client: httpx.AsyncClient, token: Token, settings: Settings
) -> None:
    auth = await headers(token)
    body = {"cluster": "demo", "url": "https://hooks.example.com/hook"}
    webhook_id = (await app_client.post("/v1/webhooks", json=body, headers=auth)).json()["id"]
    engine = create_engine(settings.database.url, pool_size=1)
    try:
        sessionmaker = make_sessionmaker(engine)
        event = DeletionEvent(EventType.FAILED, "d-1", "demo", "failed", {"total": 1, "failed": 1}, "User:a")
        async with write_transaction(sessionmaker) as session:
            assert await enqueue_events(session, [event]) == 1
        async with read_session(sessionmaker) as session:
            assert (await session.execute(select(Webhook.id))).scalars().all() == [webhook_id]
    finally:
        await engine.dispose()
    url = f"/v1/webhooks/{webhook_id}/deliveries"
    (pending,) = (await app_client.get(url, params={"status": "pending"}, headers=auth)).json()["items"]
    assert (pending["event_type"], pending["deletion_id"], pending["attempts"]) == (
        "deletion.failed",
        "d-1",
        0,
    )
    assert (await app_client.get(url, params={"status": "dead"}, headers=auth)).json()["items"] == []
    assert (await app_client.get(url, params={"status": "lost"}, headers=auth)).status_code == 422
    retried = await app_client.post(f"{url}/{pending['id']}/retry", headers=auth)
    assert retried.status_code == 202, retried.text
    assert retried.json()["status"] == "pending"
    assert datetime.fromisoformat(retried.json()["next_attempt_at"]) <= datetime.now(UTC)
    assert (await app_client.post(f"{url}/999999/retry", headers=auth)).status_code == 404
    audit = (
        await app_client.get("/v1/audit", params={"action": "webhook.delivery_retried"}, headers=auth)
    ).json()
    assert [e["details"]["delivery_id"] for e in audit["items"]] == [pending["id"]]


async def test_a_cancel_that_ends_a_deletion_with_failures_is_an_event(
    app_client: httpx.AsyncClient, token: Token, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    """Cancelling the rest of a deletion one of whose partitions failed ends it partially_failed."""
    auth = await headers(token)
    body = {
        "cluster": "demo",
        "url": "https://hooks.example.com/hook",
        "event_types": ["deletion.partially_failed"],
    }
    webhook_id = (await app_client.post("/v1/webhooks", json=body, headers=auth)).json()["id"]
    deletion_id = await insert_deletion(sessionmaker, [Target("t", 0, 1), Target("t", 1, 1)])
    async with write_transaction(sessionmaker) as session:
        failed = update(PartitionDeletion).where(
            PartitionDeletion.deletion_id == deletion_id, PartitionDeletion.partition == 0
        )
        await session.execute(failed.values(status="failed", error_code="OFFSET_OUT_OF_RANGE"))
    cancelled = await app_client.post(f"/v1/deletions/{deletion_id}/cancel", headers=auth)
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "partially_failed"
    (delivery,) = (await app_client.get(f"/v1/webhooks/{webhook_id}/deliveries", headers=auth)).json()[
        "items"
    ]
    assert (delivery["event_type"], delivery["deletion_id"]) == ("deletion.partially_failed", deletion_id)
