"""Two service processes on one PostgreSQL database share one 1,000-partition deletion, and no partition is
sent by both.

The proof is the fence: a DeleteRecords for a partition is only ever sent after a committed claim of its
row, and every claim bumps the row's fence. The completion audit event lists each partition's fence and
attempts and the instance that claimed it; fence 1 and one attempt for every partition means each was
claimed exactly once, hence sent by exactly one instance, while both instances did part of the work.

The brokers are the second referee: each instance has its own Kafka client id, and the emulator's request
log shows which instance sent each partition, when, and with which offset. Every partition was sent, by
the instance the audit names; a partition sent by both instances (a re-send after a lease expired) would
have to be sent at different times, never overlapping, and with the same approved offset.

What lets both instances take part is the number of claims and how long each is held, not the rows in a
claim: 1,000 partitions in claims of 40 are 25 claims, each leader's answer held 150 ms, so that one
instance alone, at most four batches in flight, needs about a second, five of the other's polls."""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.service_processes import (
    Database,
    Send,
    database_url,
    emulator_process,
    produce,
    service_env,
    start_services,
)

pytestmark = pytest.mark.slow

TOPIC = "shared"
PARTITIONS = 1_000
CLAIM_BATCH = 40
CLIENT_IDS = ("purge-one", "purge-two")


@pytest.mark.timeout(240)
async def test_two_instances_share_the_work_without_sending_twice(tmp_path: Path) -> None:
    with emulator_process(tmp_path, TOPIC, PARTITIONS) as emulator:
        async with database_url("postgresql", tmp_path) as url:
            envs = [
                service_env(url, emulator.bootstrap, client_id=c, claim_batch=str(CLAIM_BATCH))
                for c in CLIENT_IDS
            ]
            records = produce(emulator.bootstrap, TOPIC, PARTITIONS, records=2)
            first, second = await start_services(envs, tmp_path, records)
            db = Database(url)
            try:
                # Slow leaders keep batches out long enough for both instances to claim some.
                for broker in (1, 2, 3):
                    emulator.fault(broker, "DeleteRecords", delay_ms=150, count=200)
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
                # The summary lists the outcomes column by column; one dict per partition here.
                columns = summary["partitions"]
                outcomes = [
                    dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)
                ]
                assert len(outcomes) == PARTITIONS
                assert {(o["status"], o["fence"], o["attempts"]) for o in outcomes} == {("succeeded", 1, 1)}
                workers = Counter(o["worker"] for o in outcomes)
                assert len(workers) == 2, workers
                assert None not in workers
                assert min(workers.values()) >= PARTITIONS // 20, workers
                offsets = emulator.log_start_offsets(TOPIC)
                assert all(offsets[o["partition"]] == {o["resolved_offset"]} for o in outcomes)
                assert await db.chain_ok()
                check_sends(emulator.delete_records_sends(TOPIC), outcomes)
            finally:
                first.process.kill()
                second.process.kill()
                await db.close()


def check_sends(sends: list[Send], outcomes: list[dict[str, Any]]) -> None:
    """Broker-side: every partition sent, only with its approved offset, by one instance at a time, last
    by the instance whose worker the audit names (one client id per worker), both instances sending."""
    by_partition: dict[int, list[Send]] = defaultdict(list)
    for send in sends:
        by_partition[send.partition].append(send)
    assert set(by_partition) == set(range(PARTITIONS))
    assert {send.client_id for send in sends} == set(CLIENT_IDS)
    senders_of_worker: dict[str, set[str | None]] = defaultdict(set)
    for outcome in outcomes:
        its = by_partition[outcome["partition"]]
        assert {send.offset for send in its} == {outcome["resolved_offset"]}, its
        for a, b in combinations(its, 2):
            if a.client_id != b.client_id:
                assert a.answered < b.received or b.answered < a.received, (a, b)
        # The audit names the worker of the last claim, which made the last send.
        senders_of_worker[outcome["worker"]].add(max(its, key=lambda s: s.received).client_id)
    assert [len(senders) for senders in senders_of_worker.values()] == [1, 1], senders_of_worker
    assert set().union(*senders_of_worker.values()) == set(CLIENT_IDS), senders_of_worker
    first_senders = Counter(min(its, key=lambda s: s.received).client_id for its in by_partition.values())
    assert min(first_senders.values()) >= PARTITIONS // 20, first_senders
