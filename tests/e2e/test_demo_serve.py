"""``kafka-purge migrate`` and ``kafka-purge serve`` as real processes, configured through PURGE_* only."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def purge_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    return {
        **env,
        "PYTHONPATH": str(ROOT),
        "PURGE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'db' / 'purge.db'}",
        "PURGE_AUTH_DEV_ISSUER": "true",
        "PURGE_AUTH_DEV_CLIENTS": '{"admin": "admin-secret"}',
        **extra,
    }


def kafka_purge(*args: str) -> list[str]:
    return [sys.executable, "-m", "app", *args]


def test_migrate_creates_the_schema(tmp_path: Path) -> None:
    result = subprocess.run(
        kafka_purge("migrate"),
        env=purge_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
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


def test_serve_api_only_answers_and_stops_on_sigterm(tmp_path: Path) -> None:
    process = subprocess.Popen(
        kafka_purge("serve", "--api-only", "--port", "0"),
        env=purge_env(tmp_path),
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    started = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if "serving HTTP on" in line:
                started.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert started.wait(60), "".join(lines)
        port = int(re.search(r"serving HTTP on [\d.]+:(\d+)", "".join(lines)).group(1))  # type: ignore[union-attr]
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                health = httpx.get(f"{base}/healthz", timeout=2)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert health.status_code == 200
        unauthenticated = httpx.get(f"{base}/v1/deletions", timeout=5)
        assert unauthenticated.status_code == 401
        assert unauthenticated.headers["www-authenticate"] == 'Bearer realm="kafka-purge"'
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
