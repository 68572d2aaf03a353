"""``kafka-purge migrate`` and ``kafka-purge serve`` (whole, --api-only, --workers-only) as real processes,
configured through PURGE_* environment variables only, against the emulator run as a process too."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers.demo_processes import (
    ROOT,
    get_or_none,
    kafka_purge,
    produce_records,
    purge_env,
    running,
    service_url,
    wait_until,
)


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[dict[str, str]]:
    topology = tmp_path / "topology.yaml"
    topology.write_text(json.dumps({"topics": [{"name": "events", "partitions": 3}]}), encoding="utf-8")
    command = [sys.executable, "-m", "kafka_emulator", "--brokers", "3", "--config", str(topology)]
    with running(command, {**os.environ, "PYTHONPATH": str(ROOT)}, tmp_path) as process:
        ready = process.wait_for_line(r"^\{.*\"bootstrap\".*\}$")
        yield json.loads(ready.group(0))


def test_migrate_creates_the_schema(tmp_path: Path) -> None:
    env = purge_env(tmp_path)
    result = subprocess.run(
        kafka_purge("migrate"), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(tmp_path / "db" / "purge.db") as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"deletion", "partition_deletion", "audit_event", "alembic_version"} <= tables


def test_unsafe_configuration_is_refused(tmp_path: Path) -> None:
    env = purge_env(tmp_path, PURGE_AUTH_DEV_ISSUER="false")
    result = subprocess.run(
        kafka_purge("serve", "--port", "0"), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "PURGE_AUTH_ISSUER" in result.stderr


def test_serve_answers_and_stops_on_sigterm(tmp_path: Path) -> None:
    with running(kafka_purge("serve", "--port", "0"), purge_env(tmp_path), tmp_path) as service:
        base = service_url(service)
        health = wait_until(lambda: get_or_none(f"{base}/healthz"))
        assert health.status_code == 200
        unauthenticated = httpx.get(f"{base}/v1/deletions", timeout=5)
        assert unauthenticated.status_code == 401
        assert unauthenticated.headers["www-authenticate"] == 'Bearer realm="kafka-purge"'
        for size in (9_000, 15_000, 64_000, 1_000_000):
            status = _status_with_authorization(f"{base}/v1/deletions", "Bearer " + "a" * size)
            # Our 8 KiB token cap answers 401; larger header blocks are refused by uvicorn's parser.
            assert status == 401 if size < 10_000 else status in (None, 400, 401, 431), (size, status)
        assert get_or_none(f"{base}/healthz") is not None, "still serving after oversized credentials"
        assert service.stop() == 0


def test_api_only_and_workers_only_split_the_work(tmp_path: Path, emulator: dict[str, str]) -> None:
    clusters = json.dumps({"demo": {"bootstrap_servers": emulator["bootstrap"]}})
    env = purge_env(tmp_path, PURGE_CLUSTERS=clusters)
    produce_records(emulator["bootstrap"], "events", 3, 50)
    with running(kafka_purge("serve", "--api-only", "--port", "0"), env, tmp_path) as api:
        base = service_url(api)
        wait_until(lambda: get_or_none(f"{base}/healthz"))
        with httpx.Client(base_url=base, timeout=10) as client:
            grant = client.post(
                "/oauth/token", data={"grant_type": "client_credentials"}, auth=("admin", "admin-secret")
            )
            headers = {"Authorization": f"Bearer {grant.json()['access_token']}"}
            body = {
                "cluster": "demo",
                "partitions": [{"topic": "events", "partition": p, "offset": 20} for p in range(3)],
                "reason": "split-mode e2e",
            }
            created = client.post("/v1/deletions", json=body, headers=headers)
            assert created.status_code == 202, created.text
            location = created.headers["location"]
            time.sleep(0.5)  # no executor runs in this process: nothing may happen meanwhile
            assert client.get(location, headers=headers).json()["status"] == "pending"

            with running(kafka_purge("serve", "--workers-only"), env, tmp_path) as workers:
                workers.wait_for_line(r"executor \S+ running")
                done = wait_until(
                    lambda: (d := client.get(location, headers=headers).json())["status"] == "succeeded" and d
                )
                assert workers.stop() == 0
        assert api.stop() == 0
    assert {p["status"] for p in done["partitions"]} == {"succeeded"}
    state = httpx.get(f"{emulator['control']}/state", timeout=5).json()
    assert [p["low_watermark"] for p in state["topics"]["events"]["partitions"]] == [20, 20, 20]


def _status_with_authorization(url: str, authorization: str) -> int | None:
    """The status code, or None when the server drops the connection instead of answering."""
    try:
        return httpx.get(url, headers={"Authorization": authorization}, timeout=5).status_code
    except httpx.TransportError:
        return None
