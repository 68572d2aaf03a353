"""Kafka Connect credentials never leave through a Connect failure: not in policy runs, the audit trail and
its export, problem bodies or the log. The Connect cluster has its credentials in a password file, as the
settings require (a URL with user info is refused at start-up: ``tests/e2e/test_configuration_errors.py``).
Runs on both databases.
Kept on a fake: the service runs in-process here so its log records are captured, and a 401 is all this
needs of Connect (the real worker's refusal: tests/real_kafka/test_connect.py)."""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.connect_rest import ConnectRestServer, sink
from helpers.retention import wait_until

from app.settings import ConnectSettings, Settings
from app.worker.scheduler import RetentionScheduler

SECRET = "Connect-S3cr3t-do-not-print"
POLICIES = "/v1/clusters/demo/policies"


@pytest.fixture
def connect_server() -> Iterator[ConnectRestServer]:
    basic = base64.b64encode(f"purge:{SECRET}".encode()).decode()
    server = ConnectRestServer({}, authorization=f"Basic {basic}")
    yield server
    server.stop()


@pytest.fixture
def settings(settings: Settings, connect_server: ConnectRestServer, tmp_path: Path) -> Settings:
    password_file = tmp_path / "connect-password"
    password_file.write_text(f"{SECRET}\n")
    filed = ConnectSettings(
        url=connect_server.url, kafka_cluster="demo", username="purge", password_file=password_file
    )
    return settings.model_copy(update={"connect": {"filed": filed}})


def connect_policy(name: str, cluster: str, **topics: Any) -> dict[str, Any]:
    return {
        "name": name,
        "topics": topics or {"read_by_connectors": True},
        "consumers": {"connect": {"cluster": cluster, "connectors": ["s3-sink"]}},
        "interval_seconds": 1,
    }


async def test_a_failing_connect_cluster_shows_no_credentials(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    inter: str,
    connect_server: ConnectRestServer,
    scheduler: RetentionScheduler,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    connect_server.connectors["s3-sink"] = sink(inter)
    for cluster in ("filed",):
        created = await client.post(POLICIES, json=connect_policy(cluster, cluster), headers=alice)
        assert created.status_code == 201, created.text

    connect_server.authorization = "Basic refused"  # the credentials no longer open it: 401
    await scheduler.run_once()
    connect_server.stop()  # then it is down: a transport error
    swept = [await scheduler.run_once()]

    async def swept_again() -> bool:  # once the policy's interval has passed
        swept.append(await scheduler.run_once())
        return sum(swept) == 1

    await wait_until(swept_again)
    problems = [
        await client.post(POLICIES, json=connect_policy(f"{cluster}-2", cluster), headers=alice)
        for cluster in ("filed",)
    ]

    errors = []
    for cluster in ("filed",):
        runs = await client.get(f"{POLICIES}/{cluster}/runs", headers=alice)
        assert runs.status_code == 200, runs.text
        errors += [run["error"] for run in runs.json()["items"]]
    assert len(errors) == 2, errors
    assert all(e.startswith("Kafka Connect unreadable, nothing deleted:") for e in errors), errors
    assert f"Kafka Connect at {connect_server.url} unreadable" in " ".join(errors), errors
    assert [p.status_code for p in problems] == [503], [p.text for p in problems]
    audit = await client.get("/v1/audit", params={"action": "policy.swept"}, headers=alice)
    assert audit.status_code == 200, audit.text
    assert len(audit.json()["items"]) == 2, audit.text
    export = await client.get("/v1/audit/export", headers=alice)
    assert export.status_code == 200
    assert "Kafka Connect at" in caplog.text
    for shown in (*errors, *(p.text for p in problems), audit.text, export.text, caplog.text):
        assert SECRET not in shown
