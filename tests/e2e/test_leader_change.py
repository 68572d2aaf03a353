"""Black box, at Kafka's timing: a deletion accepted over HTTP whose partition's leadership then moves to a
follower whose high watermark still lags. The new leader answers OFFSET_OUT_OF_RANGE for the offset the
service resolved from the old leader's high watermark until it catches up; the deletion ends
``succeeded``, not ``failed``. The emulator and ``kafka-purge serve`` run as processes with their
defaults (follower fetches wait up to 500 ms, as ``replica.fetch.wait.max.ms``)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest
from helpers.service_processes import (
    Database,
    database_url,
    emulator_process,
    produce,
    service_env,
    start_services,
)

TOPIC = "orders"
RECORDS = 10
CUT = 8
CATCH_UP_MS = 1_500


async def follower_of(http: httpx.AsyncClient, control: str, topic: str, partition: int) -> int:
    state = (await http.get(f"{control}/state")).json()
    leader = int(state["topics"][topic]["partitions"][partition]["leader"])
    return next(b for b in (1, 2, 3) if b != leader)


async def wait_for_status(
    http: httpx.AsyncClient, base: str, deletion_id: str, seconds: float
) -> dict[str, object]:
    deadline = time.monotonic() + seconds
    while True:
        read = (await http.get(f"{base}/v1/deletions/{deletion_id}")).json()
        if read["status"] not in ("pending", "in_progress"):
            return dict(read)
        assert time.monotonic() < deadline, f"deletion still {read['status']} after {seconds} s"
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
async def test_a_deletion_through_a_lagging_new_leader_ends_succeeded(tmp_path: Path, database: str) -> None:
    with emulator_process(tmp_path, TOPIC, 1) as emulator:
        async with database_url(database, tmp_path) as url:
            records = produce(emulator.bootstrap, TOPIC, 1, RECORDS)
            [service] = await start_services([service_env(url, emulator.bootstrap)], tmp_path, records)
            referee = Database(url)
            headers = {"Authorization": f"Bearer {service.token()}"}
            try:
                async with httpx.AsyncClient(headers=headers, timeout=30) as http:
                    deletion_id = await _delete_through_a_lagging_leader(
                        http, emulator.control, str(service.base)
                    )
                    final = await wait_for_status(http, str(service.base), deletion_id, 20)
                assert final["status"] == "succeeded", final
                [row] = await referee.partitions(deletion_id)
                assert (row.status, row.low_watermark, row.error_code) == ("succeeded", CUT, None)
                assert emulator.log_start_offsets(TOPIC)[0] == {CUT}
                sends = emulator.delete_records_sends(TOPIC)
                assert len(sends) >= 2, "the lagging leader's refusal was not retried"
            finally:
                await referee.close()
                service.process.kill()


async def _delete_through_a_lagging_leader(http: httpx.AsyncClient, control: str, base: str) -> str:
    """Move the leadership to a follower whose high watermark lags at 2 (catching up in 1.5 s), then ask
    for a deletion below the old leader's high watermark; its id."""
    body = {"broker": await follower_of(http, control, TOPIC, 0), "high_watermark": 2}
    moved = await http.post(
        f"{control}/topics/{TOPIC}/partitions/0/leader", json={**body, "catch_up_ms": CATCH_UP_MS}
    )
    moved.raise_for_status()
    request = {
        "cluster": "demo",
        "partitions": [{"topic": TOPIC, "partition": 0, "offset": CUT}],
        "reason": "replay after a bad batch",
        "timeout_ms": 10_000,
    }
    accepted = await http.post(f"{base}/v1/deletions", json=request)
    assert accepted.status_code == 202, accepted.text
    return str(accepted.json()["id"])
