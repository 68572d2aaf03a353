"""kill -9 the service in the middle of a 1,000-partition deletion (or right after its 202), restart it:
every partition reaches a terminal state, none is lost, none is sent with another offset than the one
approved, the audit chain verifies. The service and the emulator run as real processes.

What makes the kill land mid-deletion is the number of claims and the brokers' delay, not the number of
partitions: 1,000 partitions in claims of 50 are 20 claims, each one DeleteRecords per leader held 250 ms,
at most ``MAX_BATCHES`` (4) in flight. After two claims succeeded at least four rounds of held requests
are left, over a second, for the kill to land in; more partitions per claim would add rows, not claims.

The emulator's request log is the broker-side referee: every DeleteRecords the brokers received for a
partition, before or after the kill, carried the offset stored at accept time (never -1, never the newer
high watermark), and every partition was sent."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from helpers.service_processes import (
    Database,
    database_url,
    emulator_process,
    produce,
    service_env,
    start_service,
    start_services,
)

pytestmark = pytest.mark.slow

TOPIC = "crash"
PARTITIONS = 1_000
CLAIM_BATCH = 50


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_kill_9_mid_deletion_then_restart(kind: str, tmp_path: Path) -> None:
    with emulator_process(tmp_path, TOPIC, PARTITIONS) as emulator:
        async with database_url(kind, tmp_path) as url:
            # Small batches and short leases: the kill lands between claims, and the dead instance's
            # leases expire quickly after the restart.
            worker = {"claim_batch": str(CLAIM_BATCH), "lease_seconds": "2"}
            env = service_env(url, emulator.bootstrap, client_id="before-kill", **worker)
            records = produce(emulator.bootstrap, TOPIC, PARTITIONS, records=2)
            [service] = await start_services([env], tmp_path, records)
            db = Database(url)
            try:
                # Slow every leader down so the kill happens with batches in flight.
                for broker in (1, 2, 3):
                    emulator.fault(broker, "DeleteRecords", delay_ms=250, count=200)
                # Even partitions ask for the high watermark (-1, resolved to 2 at accept time).
                body = {
                    "cluster": "demo",
                    "partitions": [
                        {"topic": TOPIC, "partition": p, "offset": -1 if p % 2 == 0 else 1}
                        for p in range(PARTITIONS)
                    ],
                    "leader_only": False,
                    "timeout_ms": 120_000,
                    "reason": "crash test",
                }
                headers = {"Authorization": f"Bearer {service.token()}"}
                async with httpx.AsyncClient(base_url=str(service.base), timeout=60) as client:
                    response = await client.post("/v1/deletions", json=body, headers=headers)
                assert response.status_code == 202, response.text
                deletion_id = response.json()["id"]
                await db.wait_status(deletion_id, {"in_progress"}, timeout_s=30)
                await db.wait_succeeded(deletion_id, at_least=2 * CLAIM_BATCH, timeout_s=60)
                service.process.kill()
                at_kill = await db.counts(deletion_id)
                assert at_kill.get("succeeded", 0) < PARTITIONS, at_kill
                # New records after the kill: a resend of "-1" would now delete them too.
                await produce(emulator.bootstrap, TOPIC, PARTITIONS, records=1)
                env = service_env(url, emulator.bootstrap, client_id="after-restart", **worker)
                service = start_service(env, tmp_path, workers_only=True)
                assert await db.wait_status(deletion_id, {"succeeded"}, timeout_s=150) == "succeeded"
                rows = await db.partitions(deletion_id)
                assert len(rows) == PARTITIONS
                assert {r.status for r in rows} == {"succeeded"}
                assert all(r.resolved_offset == (2 if r.partition % 2 == 0 else 1) for r in rows)
                offsets = emulator.log_start_offsets(TOPIC)
                assert all(offsets[r.partition] == {r.resolved_offset} for r in rows)
                # The dead instance's in-flight rows were claimed again after its leases expired.
                assert max(r.fence for r in rows) >= 2
                assert len({r.lease_owner for r in rows}) == 2
                assert await db.chain_ok()
                sends = emulator.delete_records_sends(TOPIC)
                resolved = {r.partition: r.resolved_offset for r in rows}
                assert {s.partition for s in sends} == set(resolved)
                assert [s for s in sends if s.offset != resolved[s.partition]] == []
                assert {s.client_id for s in sends} == {"before-kill", "after-restart"}
            finally:
                service.process.kill()
                await db.close()


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_kill_9_right_after_the_202_then_restart(kind: str, tmp_path: Path) -> None:
    """The accepting instance stores the first batch already claimed by its own executor, which sends it
    before the answer is even written: killed right after the 202, those rows wait out the dead
    instance's lease, then the restarted one claims them again (a new fence) and resends the same
    approved offsets; nothing is lost or sent with another offset."""
    # Four claims' worth: the first stored claimed, the rest pending.
    partitions, claim_batch = 1_000, 250
    with emulator_process(tmp_path, TOPIC, partitions) as emulator:
        async with database_url(kind, tmp_path) as url:
            worker = {"claim_batch": str(claim_batch), "lease_seconds": "2"}
            env = service_env(url, emulator.bootstrap, client_id="before-kill", **worker)
            records = produce(emulator.bootstrap, TOPIC, partitions, records=2)
            [service] = await start_services([env], tmp_path, records)
            db = Database(url)
            try:
                # Answers held back 3 s: no write-back can land before the kill.
                for broker in (1, 2, 3):
                    emulator.fault(broker, "DeleteRecords", delay_ms=3_000, count=2)
                body = {
                    "cluster": "demo",
                    "partitions": [{"topic": TOPIC, "partition": p, "offset": 1} for p in range(partitions)],
                    "timeout_ms": 120_000,
                    "reason": "crash test",
                }
                headers = {"Authorization": f"Bearer {service.token()}"}
                async with httpx.AsyncClient(base_url=str(service.base), timeout=60) as client:
                    response = await client.post("/v1/deletions", json=body, headers=headers)
                service.process.kill()
                assert response.status_code == 202, response.text
                deletion_id = response.json()["id"]
                at_kill = await db.partitions(deletion_id)
                assert len(at_kill) == partitions
                assert not [r for r in at_kill if r.status == "succeeded"]
                held = {r.partition for r in at_kill if r.lease_expires_at is not None}
                # At least the first batch, stored claimed by the accepting instance's executor.
                assert len(held) >= claim_batch
                assert {r.fence for r in at_kill if r.partition in held} == {1}
                env = service_env(url, emulator.bootstrap, client_id="after-restart", **worker)
                service = start_service(env, tmp_path, workers_only=True)
                assert await db.wait_status(deletion_id, {"succeeded"}, timeout_s=150) == "succeeded"
                rows = await db.partitions(deletion_id)
                assert {r.status for r in rows} == {"succeeded"}
                assert all(r.fence >= 2 for r in rows if r.partition in held)
                offsets = emulator.log_start_offsets(TOPIC)
                assert all(offsets[r.partition] == {1} for r in rows)
                assert await db.chain_ok()
                sends = emulator.delete_records_sends(TOPIC)
                assert {s.partition for s in sends} == set(range(partitions))
                assert {s.offset for s in sends} == {1}
                assert "after-restart" in {s.client_id for s in sends}
            finally:
                service.process.kill()
                await db.close()
