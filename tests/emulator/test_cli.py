"""``python -m kafka_emulator`` as a real process: the ready line, the control API, clean SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import httpx
from aiokafka import AIOKafkaClient
from helpers.emulator.wire_client import RawConnection

STARTUP_TIMEOUT_S = 30


async def _start(*args: str) -> tuple[asyncio.subprocess.Process, dict[str, str]]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kafka_emulator", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), STARTUP_TIMEOUT_S)
    return process, json.loads(line)


async def _terminate(process: asyncio.subprocess.Process, sig: signal.Signals = signal.SIGTERM) -> int:
    process.send_signal(sig)
    return await asyncio.wait_for(process.wait(), STARTUP_TIMEOUT_S)


async def test_cli_prints_one_ready_line_and_exits_cleanly_on_sigterm(tmp_path: Path) -> None:
    config = tmp_path / "topology.yaml"
    config.write_text("topics:\n  - {name: cli-orders, partitions: 2, configs: {cleanup.policy: delete}}\n")
    process, ready = await _start(
        "--brokers", "2", "--config", str(config), "--delete-records-max-version", "2"
    )
    try:
        assert set(ready) == {"bootstrap", "control"}
        assert len(ready["bootstrap"].split(",")) == 2
        async with httpx.AsyncClient(base_url=ready["control"], timeout=10) as control:
            state = (await control.get("/state")).json()
            assert len(state["topics"]["cli-orders"]["partitions"]) == 2
            created = await control.post("/topics", json={"name": "cli-more", "partitions": 1})
            assert created.status_code == 200
        client = AIOKafkaClient(bootstrap_servers=ready["bootstrap"])
        await client.bootstrap()
        try:
            await client.force_metadata_update()
            assert client.cluster.partitions_for_topic("cli-more") == {0}
        finally:
            await client.close()
        host, port = ready["bootstrap"].split(",")[0].split(":")
        connection = await RawConnection.open(host, int(port))
        try:
            versions = (await connection.request("ApiVersions", 0))["ApiKeys"]
            assert {k["ApiKey"]: k["MaxVersion"] for k in versions}[21] == 2
        finally:
            await connection.close()
    finally:
        code = await _terminate(process)
    assert code == 0
    assert process.stdout is not None
    assert await process.stdout.read() == b""  # exactly one line


async def test_cli_exits_cleanly_on_sigint() -> None:
    process, ready = await _start("--brokers", "1")
    assert ready["bootstrap"].startswith("127.0.0.1:")
    assert await _terminate(process, signal.SIGINT) == 0


async def test_cli_rejects_a_bad_topology(tmp_path: Path) -> None:
    config = tmp_path / "topology.yaml"
    config.write_text("brokers: 2\nunknown_key: 1\n")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kafka_emulator", "--config", str(config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stdout, stderr = await asyncio.wait_for(process.communicate(), STARTUP_TIMEOUT_S)
    assert process.returncode == 2
    assert stdout == b""
    assert b"unknown topology keys" in stderr
