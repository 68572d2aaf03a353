"""``kafka-purge demo`` as a real process: a deletion submitted like the banner's curl example succeeds
and the emulated brokers' log start offsets move; Ctrl-C stops the service and the emulator."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

READY_SECONDS = 60.0
GRANT = {"grant_type": "client_credentials"}
ROOT = Path(__file__).resolve().parents[2]
COMMAND = [sys.executable, "-m", "app", "--log-level", "WARNING", "demo"]


class Demo:
    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: list[str] = []
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            if "Press Ctrl-C" in line:
                self.ready.set()
        self.ready.set()

    def find(self, label: str) -> str:
        pattern = re.compile(rf"{re.escape(label)}\s+(\S+)")
        for line in self.lines:
            match = pattern.search(line)
            if match:
                return match.group(1)
        raise AssertionError(f"{label!r} not in the banner:\n{''.join(self.lines)}")


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app",
            "--log-level",
            "WARNING",
            "demo",
            "--port",
            "0",
            "--data-dir",
            str(tmp_path),
        ],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    running = Demo(process)
    try:
        assert running.ready.wait(READY_SECONDS), "the demo did not come up"
        assert process.poll() is None, "".join(running.lines)
        yield running
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)  # the demo stops the service, then its emulator
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_for(check: Any, deadline_seconds: float = 30.0) -> Any:
    deadline = time.monotonic() + deadline_seconds
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < deadline, "condition not reached before the deadline"
        time.sleep(0.1)


def partition_state(control: str, topic: str, partition: int) -> dict[str, Any]:
    state = httpx.get(f"{control}/state", timeout=5).json()
    found: dict[str, Any] = state["topics"][topic]["partitions"][partition]
    return found


def test_demo_deletion_succeeds_and_moves_log_start_offsets(demo: Demo) -> None:
    base = demo.find("API base URL:")
    control = demo.find("Emulator control API:").removesuffix("/state")
    assert httpx.get(f"{base}/docs", timeout=5).status_code == 200
    before = partition_state(control, "orders.eu", 1)
    assert before["low_watermark"] == 0

    with httpx.Client(base_url=base, timeout=10) as client:
        grant = client.post(
            "/oauth/token", data={"grant_type": "client_credentials"}, auth=("orders-team", "orders-secret")
        )
        assert grant.status_code == 200, grant.text
        headers = {"Authorization": f"Bearer {grant.json()['access_token']}"}
        body = {
            "cluster": "demo",
            "partitions": [
                {"topic": "orders.eu", "partition": 0, "offset": 100},
                {"topic": "orders.eu", "partition": 1, "offset": -1},
            ],
            "reason": "e2e: purge old EU orders",
        }
        created = client.post("/v1/deletions", json=body, headers=headers)
        assert created.status_code == 202, created.text
        location = created.headers["location"]

        def finished() -> dict[str, Any] | None:
            resource: dict[str, Any] = client.get(location, headers=headers).json()
            return resource if resource["status"] not in ("pending", "in_progress") else None

        deletion = wait_for(finished)
    assert deletion["status"] == "succeeded", deletion
    resolved = {p["partition"]: p["resolved_offset"] for p in deletion["partitions"]}
    high_watermark = before["replica_states"][str(before["leader"])]["high_watermark"]
    assert high_watermark > 0
    assert resolved == {0: 100, 1: high_watermark}
    for partition, offset in resolved.items():
        state = partition_state(control, "orders.eu", partition)
        assert state["low_watermark"] == offset
        assert all(r["log_start_offset"] == offset for r in state["replica_states"].values())
    untouched = partition_state(control, "orders.eu", 2)
    assert untouched["low_watermark"] == 0


def test_demo_clients_have_the_announced_permissions(demo: Demo) -> None:
    base = demo.find("API base URL:")
    with httpx.Client(base_url=base, timeout=10) as client:

        def bearer(client_id: str, secret: str) -> dict[str, str]:
            grant = client.post(
                "/oauth/token", data={"grant_type": "client_credentials"}, auth=(client_id, secret)
            )
            return {"Authorization": f"Bearer {grant.json()['access_token']}"}

        orders, auditor = bearer("orders-team", "orders-secret"), bearer("auditor", "auditor-secret")
        body = {
            "cluster": "demo",
            "partitions": [{"topic": "payments", "partition": 0, "offset": 1}],
            "reason": "x",
        }
        assert client.post("/v1/deletions", json=body, headers=orders).status_code == 403
        assert client.post("/v1/deletions", json=body, headers=auditor).status_code == 403
        own = {**body, "partitions": [{"topic": "orders.us", "partition": 0, "offset": 1}]}
        created = client.post("/v1/deletions", json=own, headers=orders)
        assert created.status_code == 202, created.text
        assert client.get(created.headers["location"], headers=auditor).status_code == 200
        assert client.get("/v1/audit", headers=auditor).status_code == 200
        assert client.get("/v1/audit", headers=orders).status_code == 403


def test_ctrl_c_stops_the_service_and_the_emulator(demo: Demo) -> None:
    base = demo.find("API base URL:")
    control = demo.find("Emulator control API:").removesuffix("/state")
    assert httpx.get(f"{control}/state", timeout=5).status_code == 200
    demo.process.send_signal(signal.SIGINT)
    assert demo.process.wait(timeout=30) == 0
    for url in (f"{base}/healthz", f"{control}/state"):
        with pytest.raises(httpx.ConnectError):
            httpx.get(url, timeout=2)


def processes_mentioning(text: str) -> list[int]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text in cmdline.read_bytes().decode(errors="replace"):
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# 0.3 s: still importing or starting the emulator; 1.0 s: preparing; 2.0 s: around the first HTTP calls.
@pytest.mark.parametrize("delay", [0.3, 1.0, 2.0])
def test_ctrl_c_during_start_up_leaves_no_emulator_behind(tmp_path: Path, delay: float) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    process = subprocess.Popen(
        [*COMMAND, "--port", "0", "--data-dir", str(tmp_path)],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        # As from a terminal: a runner started in the background (``cmd &`` without job control) ignores
        # SIGINT, and its children inherit that, so an early Ctrl-C would never arrive.
        preexec_fn=default_sigint,
    )
    try:
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        # Interrupted while still importing, Python dies of the signal itself (-SIGINT); that is fine too.
        assert process.wait(timeout=30) in (0, 130, -signal.SIGINT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    wait_for(lambda: not processes_mentioning(str(tmp_path / "demo-topology.yaml")), 10)


def test_a_killed_demo_takes_its_emulator_with_it(demo: Demo) -> None:
    control = demo.find("Emulator control API:").removesuffix("/state")
    assert httpx.get(f"{control}/state", timeout=5).status_code == 200
    demo.process.kill()  # no chance to clean up: the emulator must still go
    demo.process.wait()

    def emulator_gone() -> bool:
        try:
            httpx.get(f"{control}/state", timeout=1)
        except httpx.TransportError:
            return True
        return False

    wait_for(emulator_gone, deadline_seconds=15)
