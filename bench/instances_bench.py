"""Three `kafka-purge serve` instances on one PostgreSQL database under kill -9s and a broker stop: how
long deletions take, and that none is lost, sent with a wrong offset or completed twice.

Everything runs as real processes on loopback (the helpers of tests/helpers/service_processes.py): one
emulated 3-broker cluster at Kafka's follower fetch timing, topic `instances` (12 partitions, replication
factor 3, 400 records each), a throw-away PostgreSQL database, three service instances each with its own
Kafka client id. Deletions are submitted at a steady pace, round-robin over the instances; each names 3
random partitions, at rising offsets, and about one partition in three at an offset its log start offset
has already passed, so that many DeleteRecords requests mix a finished partition with one waiting for
followers. Every DeleteRecords is held `--broker-delay-ms` (1 s) by the emulator before it is
handled, so that sends are in flight when an instance dies. Meanwhile one instance at a time is killed
with SIGKILL and started again, and one broker is stopped and started. A POST routed to a killed
instance, or that fails (connection refused or reset, 5xx), is sent again, with the same
Idempotency-Key, to the next instance; 401 fetches a new token (the dev issuer's key is per process).

Referees, after every deletion ended:
- lost: every submission got a deletion id, and the database holds each one, one per Idempotency-Key;
- wrong offsets: every replica's log start offset is the highest offset any deletion resolved for its
  partition, and every DeleteRecords the brokers received (the emulator's request log) carried an offset
  a deletion resolved for that partition;
- duplicate completions: exactly one `deletion.completed` audit event per deletion; the chain verifies.

Latency is from the first POST attempt to the deletion row's `finished_at`.

Run: .venv/bin/python bench/instances_bench.py [--deletions 80] [--interval 0.6] [--kills 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import func, select

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from helpers.service_processes import (  # noqa: E402
    Database,
    Emulator,
    Service,
    database_url,
    emulator_process,
    produce,
    service_env,
    start_service,
)

from app.adapters.db.models import AuditEvent, Deletion, PartitionDeletion  # noqa: E402
from app.adapters.db.session import read_session  # noqa: E402

TOPIC = "instances"
PARTITIONS = 12
RECORDS = 400
TERMINAL = {"succeeded", "partially_failed", "failed", "cancelled"}


@dataclass
class Instance:
    env: dict[str, str]
    cwd: Path
    service: Service | None = None
    token: str | None = None
    restarts: int = 0

    async def start(self) -> None:
        self.service = await asyncio.to_thread(start_service, self.env, self.cwd)
        self.token = await asyncio.to_thread(self.service.token)

    def kill(self) -> None:
        service, self.service, self.token = self.service, None, None
        if service is not None:
            service.process.kill()  # Popen.kill: SIGKILL


@dataclass
class Submission:
    index: int
    key: str
    body: dict[str, Any]
    first_sent: float = 0.0
    deletion_id: str | None = None
    attempts: int = 0
    replayed: bool = False


@dataclass
class Run:
    instances: list[Instance]
    submissions: list[Submission] = field(default_factory=list)
    events: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        self.events.append(f"{time.strftime('%H:%M:%S')} {text}")
        print(text, flush=True)


def deletion_body(index: int, rng: random.Random, reached: dict[int, int]) -> dict[str, Any]:
    """3 partitions; a rising offset, or (one time in three) one already passed on that partition."""
    partitions = []
    for partition in rng.sample(range(PARTITIONS), 3):
        top = min(RECORDS, 4 * (index + 1))
        offset = rng.randint(0, reached[partition]) if rng.random() < 1 / 3 else top
        reached[partition] = max(reached[partition], offset)
        partitions.append({"topic": TOPIC, "partition": partition, "offset": offset})
    return {"cluster": "demo", "partitions": partitions, "timeout_ms": 60_000, "reason": f"bench {index}"}


async def submit(run: Run, submission: Submission, client: httpx.AsyncClient) -> None:
    submission.first_sent = time.time()
    headers = {"Idempotency-Key": submission.key}
    deadline = time.monotonic() + 120
    turn = submission.index
    while time.monotonic() < deadline:
        instance = run.instances[turn % len(run.instances)]
        turn += 1
        submission.attempts += 1
        if instance.service is None or instance.token is None:  # killed: as a refused connection
            continue
        try:
            response = await client.post(
                f"{instance.service.base}/v1/deletions",
                json=submission.body,
                headers={**headers, "Authorization": f"Bearer {instance.token}"},
            )
        except httpx.TransportError:
            continue
        if response.status_code == 401:
            instance.token = await asyncio.to_thread(instance.service.token)
            continue
        if response.status_code >= 500:
            continue
        if response.status_code in (200, 201, 202):
            submission.deletion_id = response.json()["id"]
            submission.replayed = response.headers.get("Idempotent-Replayed") == "true"
            return
        raise AssertionError(f"POST answered {response.status_code}: {response.text}")
    raise AssertionError(f"deletion {submission.index} was never accepted")


async def submit_all(run: Run, count: int, interval: float, seed: int) -> None:
    rng = random.Random(seed)
    reached = dict.fromkeys(range(PARTITIONS), 0)
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=30) as client:
        tasks = []
        for index in range(count):
            await asyncio.sleep(max(0.0, started + index * interval - time.monotonic()))
            submission = Submission(index, str(uuid.uuid4()), deletion_body(index, rng, reached))
            run.submissions.append(submission)
            tasks.append(asyncio.create_task(submit(run, submission, client)))
        await asyncio.gather(*tasks)


async def broker_action(emulator: Emulator, action: str) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        (await client.post(f"{emulator.control}/brokers/3/{action}")).raise_for_status()


async def faults(run: Run, emulator: Emulator, kills: int, every: float) -> None:
    """kill -9 instance k % 3, start it again at once; one broker stopped halfway, started 8 s later."""
    for k in range(kills):
        await asyncio.sleep(every)
        instance = run.instances[k % len(run.instances)]
        instance.kill()
        run.note(f"kill -9 instance {k % len(run.instances)}")
        if k == kills // 2:
            await broker_action(emulator, "stop")
            run.note("broker 3 stopped")
        await instance.start()
        instance.restarts += 1
        if k == kills // 2:
            await asyncio.sleep(8)
            await broker_action(emulator, "start")
            run.note("broker 3 started")


async def wait_terminal(db: Database, ids: list[str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        async with read_session(db.sessionmaker) as session:
            query = (
                select(Deletion.status, func.count()).where(Deletion.id.in_(ids)).group_by(Deletion.status)
            )
            counts = dict((await session.execute(query)).all())
        if sum(n for s, n in counts.items() if s in TERMINAL) == len(ids):
            return
        assert time.monotonic() < deadline, f"deletions not finished: {counts}"
        await asyncio.sleep(0.5)


async def referee(run: Run, db: Database, emulator: Emulator) -> dict[str, Any]:
    ids = [s.deletion_id for s in run.submissions if s.deletion_id is not None]
    async with read_session(db.sessionmaker) as session:
        deletions = {d.id: d for d in (await session.execute(select(Deletion))).scalars().all()}
        rows = (await session.execute(select(PartitionDeletion))).scalars().all()
        completions = Counter(
            (
                await session.execute(
                    select(AuditEvent.deletion_id).where(AuditEvent.action == "deletion.completed")
                )
            ).scalars()
        )
    resolved: dict[int, set[int]] = defaultdict(set)
    for row in rows:
        resolved[row.partition].add(row.resolved_offset)
    replicas = emulator.log_start_offsets(TOPIC)
    wrong_replicas = [p for p, found in replicas.items() if found != {max(resolved.get(p, {0}))}]
    sends = emulator.delete_records_sends(TOPIC)
    wrong_sends = [s for s in sends if s.offset not in resolved[s.partition]]
    latencies = sorted(
        deletions[s.deletion_id].finished_at.replace(tzinfo=UTC).timestamp() - s.first_sent  # type: ignore[union-attr]
        for s in run.submissions
        if s.deletion_id is not None
    )
    statuses = Counter(row.status for row in rows)
    return {
        "deletions": len(run.submissions),
        "partitions": len(rows),
        "deletion_statuses": dict(Counter(deletions[i].status for i in ids)),
        "partition_statuses": dict(statuses),
        "succeeded_with_broker_error": sum(1 for r in rows if r.status == "succeeded" and r.error_code),
        "failed_partition_messages": sorted({r.error_message or "" for r in rows if r.status == "failed"}),
        "lost": sum(1 for s in run.submissions if s.deletion_id not in deletions),
        # More rows than submissions would be a retried POST that created a second deletion.
        "extra_deletion_rows": len(deletions) - len(set(ids)),
        "post_retries": sum(s.attempts - 1 for s in run.submissions),
        "replayed": sum(1 for s in run.submissions if s.replayed),
        "wrong_replica_offsets": wrong_replicas,
        "wrong_sends": len(wrong_sends),
        "delete_records_sends": len(sends),
        "duplicate_completions": sum(1 for i in ids if completions[i] != 1),
        "audit_chain_ok": await db.chain_ok(),
        "latency_s": {
            "median": round(statistics.median(latencies), 2),
            "p95": round(latencies[max(0, round(0.95 * len(latencies)) - 1)], 2),
            "max": round(latencies[-1], 2),
        },
        "restarts": [i.restarts for i in run.instances],
        "events": run.events,
    }


async def main(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, emulator_process(Path(tmp), TOPIC, PARTITIONS) as emulator:
        cwd = Path(tmp)
        await produce(emulator.bootstrap, TOPIC, PARTITIONS, records=RECORDS)
        for broker in (1, 2, 3):  # sends in flight long enough for the kills to land on some
            emulator.fault(broker, "DeleteRecords", delay_ms=args.broker_delay_ms, count=100_000)
        async with database_url("postgresql", cwd) as url:
            worker = {"lease_seconds": str(args.lease_seconds)}
            instances = [
                Instance(service_env(url, emulator.bootstrap, client_id=f"purge-{i}", **worker), cwd)
                for i in range(3)
            ]
            await instances[0].start()  # migrates the database alone
            await asyncio.gather(*(instance.start() for instance in instances[1:]))
            run = Run(instances)
            db = Database(url)
            try:
                started = datetime.now(UTC)
                await asyncio.gather(
                    submit_all(run, args.deletions, args.interval, args.seed),
                    faults(run, emulator, args.kills, args.kill_every),
                )
                ids = [s.deletion_id for s in run.submissions if s.deletion_id is not None]
                await wait_terminal(db, ids, timeout_s=300)
                report = await referee(run, db, emulator)
                report["started"] = started.isoformat(timespec="seconds")
                report["settings"] = vars(args)
                return report
            finally:
                for instance in instances:
                    instance.kill()
                await db.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--deletions", type=int, default=80)
    parser.add_argument("--interval", type=float, default=0.6, help="seconds between submissions")
    parser.add_argument("--kills", type=int, default=5, help="kill -9s, one instance at a time")
    parser.add_argument("--kill-every", type=float, default=8.0, help="seconds between kills")
    parser.add_argument("--lease-seconds", type=int, default=10, help="PURGE_WORKER_LEASE_SECONDS")
    parser.add_argument("--broker-delay-ms", type=float, default=1000, help="added to every DeleteRecords")
    parser.add_argument("--seed", type=int, default=29)
    print(json.dumps(asyncio.run(main(parser.parse_args())), indent=2))
