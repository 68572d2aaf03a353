"""Two service processes on one PostgreSQL database share one 5,000-partition deletion, and no partition is
sent by both.

The proof is the fence: a DeleteRecords for a partition is only ever sent after a committed claim of its
row, and every claim bumps the row's fence. The completion audit event lists each partition's fence and
attempts and the instance that claimed it; fence 1 and one attempt for every partition means each was
claimed exactly once, hence sent by exactly one instance, while both instances did part of the work."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import httpx
import pytest
from test_crash_support import (
    Database,
    database_url,
    emulator_process,
    produce,
    service_env,
    start_service,
)

pytestmark = pytest.mark.slow

TOPIC = "shared"
PARTITIONS = 5_000


@pytest.mark.timeout(240)
async def test_two_instances_share_the_work_without_sending_twice(tmp_path: Path) -> None:
    with emulator_process(tmp_path, TOPIC, PARTITIONS) as emulator:
        await produce(emulator.bootstrap, TOPIC, PARTITIONS, records=2)
        async with database_url("postgresql", tmp_path) as url:
            env = service_env(url, emulator.bootstrap, claim_batch="200")
            first = start_service(env, tmp_path)
            second = start_service(env, tmp_path)
            db = Database(url)
            try:
                # Slow leaders keep batches out long enough for both instances to claim some.
                for broker in (1, 2, 3):
                    emulator.fault(broker, "DeleteRecords", delay_ms=60, count=200)
                body = {
                    "cluster": "demo",
                    "partitions": [
                        {"topic": TOPIC, "partition": p, "offset": 1 + p % 2} for p in range(PARTITIONS)
                    ],
                    "timeout_ms": 120_000,
                    "reason": "two instances",
                }
                headers = {"Authorization": f"Bearer {first.token()}"}
                async with httpx.AsyncClient(base_url=str(first.base), timeout=60) as client:
                    response = await client.post("/v1/deletions", json=body, headers=headers)
                assert response.status_code == 202, response.text
                deletion_id = response.json()["id"]
                assert await db.wait_status(deletion_id, {"succeeded"}, timeout_s=150) == "succeeded"
                [summary] = await db.audit_details(deletion_id, "deletion.completed")
                outcomes = summary["partitions"]
                assert len(outcomes) == PARTITIONS
                assert {(o["status"], o["fence"], o["attempts"]) for o in outcomes} == {("succeeded", 1, 1)}
                workers = Counter(o["worker"] for o in outcomes)
                assert len(workers) == 2, workers
                assert None not in workers
                assert min(workers.values()) >= PARTITIONS // 20, workers
                offsets = emulator.log_start_offsets(TOPIC)
                assert all(offsets[o["partition"]] == {o["resolved_offset"]} for o in outcomes)
                assert await db.chain_ok()
            finally:
                first.process.kill()
                second.process.kill()
                await db.close()
