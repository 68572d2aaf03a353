"""``kafka-purge demo`` as a real process: its data (a week of records, a lagging and a live consumer
group, a Spark consumer, a retention policy that has swept once), a deletion that moves the emulated
brokers' log start offsets, the clients' permissions; Ctrl-C stops the service and the emulator."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.demo_processes import ROOT, DemoProcess, demo_process

COMMAND = [sys.executable, "-m", "app", "--log-level", "WARNING", "demo"]


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[DemoProcess]:
    with demo_process(tmp_path) as running_demo:
        yield running_demo


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


def bearer(client: httpx.Client, client_id: str, secret: str) -> dict[str, str]:
    grant = client.post("/oauth/token", data={"grant_type": "client_credentials"}, auth=(client_id, secret))
    assert grant.status_code == 200, grant.text
    return {"Authorization": f"Bearer {grant.json()['access_token']}"}


def test_demo_deletion_succeeds_and_moves_log_start_offsets(demo: DemoProcess) -> None:
    base, control = demo.base_url, demo.control_url
    assert httpx.get(f"{base}/docs", timeout=5).status_code == 200
    before = partition_state(control, "orders.us", 1)
    assert before["low_watermark"] == 0

    with httpx.Client(base_url=base, timeout=10) as client:
        headers = bearer(client, "orders-team", "orders-secret")
        body = {
            "cluster": "demo",
            "partitions": [
                {"topic": "orders.us", "partition": 0, "offset": 100},
                {"topic": "orders.us", "partition": 1, "offset": -1},
            ],
            "reason": "e2e: purge old US orders",
        }
        refused = client.post("/v1/deletions", json=body, headers=headers)
        assert refused.status_code == 409, refused.text  # the demo's groups have not read it all
        assert {g["group"] for g in refused.json()["groups"]} == {"orders-billing", "orders-shipping"}
        created = client.post("/v1/deletions", json={**body, "allow_unconsumed": True}, headers=headers)
        assert created.status_code == 202, created.text
        location = created.headers["location"]

        def finished() -> dict[str, Any] | None:
            resource: dict[str, Any] = client.get(location, headers=headers).json()
            return resource if resource["status"] not in ("pending", "in_progress") else None

        deletion = wait_for(finished)
    assert deletion["status"] == "succeeded", deletion
    resolved = {p["partition"]: p["resolved_offset"] for p in deletion["partitions"]}
    high_watermark = before["replica_states"][str(before["leader"])]["high_watermark"]
    assert high_watermark == 200
    assert resolved == {0: 100, 1: high_watermark}
    for partition, offset in resolved.items():
        state = partition_state(control, "orders.us", partition)
        assert state["low_watermark"] == offset
        assert all(r["log_start_offset"] == offset for r in state["replica_states"].values())
    untouched = partition_state(control, "orders.us", 2)
    assert untouched["low_watermark"] == 0


def test_demo_has_groups_a_spark_consumer_a_policy_and_a_week_of_records(demo: DemoProcess) -> None:
    groups = httpx.get(f"{demo.control_url}/state", timeout=5).json()["groups"]
    assert groups["orders-billing"]["state"] == "Empty"
    assert groups["orders-shipping"]["state"] == "Stable"
    assert len(groups["orders-shipping"]["members"]) == 1
    with httpx.Client(base_url=demo.base_url, timeout=10) as client:
        headers = bearer(client, "orders-team", "orders-secret")
        topic = client.get("/v1/clusters/demo/topics/orders.us", headers=headers).json()
        lags = {(g["group"], g["has_active_members"]): g["total_lag"] for g in topic["groups"]}
        assert lags == {("orders-billing", False): 150, ("orders-shipping", True): 30}
        spark = client.get("/v1/clusters/demo/consumers/orders-enricher", headers=headers).json()
        assert {(p["topic"], p["offset"]) for p in spark["progress"]} == {("orders.eu", 100)}
        runs = "/v1/clusters/demo/policies/orders-eu-consumed/runs"
        first = wait_for(lambda: client.get(runs, headers=headers).json()["items"])[-1]
        assert first["status"] == "submitted", first
        now_ms = int(time.time() * 1000)
        day_ms = 86_400_000
        cuts = {}
        for days in (8, 3, 0):
            preview = {
                "cluster": "demo",
                "partitions": [{"topic": "orders.us", "partition": 2, "before": now_ms - days * day_ms}],
                "reason": "e2e",
                "dry_run": True,
            }
            answer = client.post("/v1/deletions", json=preview, headers=headers)
            assert answer.status_code == 200, answer.text
            cuts[days] = answer.json()["partitions"][0]["resolved_offset"]
    # 200 records a partition, evenly over the last 7 days: none older than 8 days, ~4/7 older than 3.
    assert cuts[8] == 0
    assert 110 <= cuts[3] <= 118
    assert cuts[0] >= 199

    def orders_eu_cut_at_spark_position() -> bool:
        return all(
            partition_state(demo.control_url, "orders.eu", p)["low_watermark"] == 100 for p in range(6)
        )

    wait_for(orders_eu_cut_at_spark_position)


def test_demo_clients_have_the_announced_permissions(demo: DemoProcess) -> None:
    with httpx.Client(base_url=demo.base_url, timeout=10) as client:
        orders = bearer(client, "orders-team", "orders-secret")
        auditor = bearer(client, "auditor", "auditor-secret")
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


def test_ctrl_c_stops_the_service_and_the_emulator(demo: DemoProcess) -> None:
    base = demo.find("API base URL:")
    control = demo.find("Emulator control API:").removesuffix("/state")
    assert httpx.get(f"{control}/state", timeout=5).status_code == 200
    demo.process.send_signal(signal.SIGINT)
    # The shutdown takes seconds; 60 s leaves room for a machine shared with the other test worker's
    # real Kafka cluster (30 s was once not enough there).
    assert demo.process.wait(timeout=60) == 0
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


def test_a_killed_demo_takes_its_emulator_with_it(demo: DemoProcess) -> None:
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
