"""Two service processes on one database (SQLite and PostgreSQL) take many small POSTs over real HTTP at
once: each instance stores them several per transaction (``app.services.deletions.group_commit``), and
still every request is one deletion, worked to the end, with a chain that verifies. The same
Idempotency-Key sent to both instances at the same moment makes one deletion, both answers naming it,
and fails none of the requests stored with it: the later instance finds the key in its transaction, or
(PostgreSQL, both transactions under way at once) loses the unique constraint and stores its
transaction's requests one by one."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
import pytest
from helpers.service_processes import (
    Database,
    Service,
    database_url,
    emulator_process,
    produce,
    service_env,
    start_services,
)
from sqlalchemy import func, select

from app.adapters.db.models import Deletion
from app.adapters.db.session import read_session

pytestmark = pytest.mark.slow

TOPIC = "small"
PARTITIONS = 16
PLAIN = 48  # requests without a key, three per partition
KEYED = 8  # keys, each sent to both instances at once
TRANSACTIONS = re.compile(r"^kafka_purge_accept_transactions_total (\S+)$", re.MULTILINE)


def body(partition: int, offset: int) -> dict[str, object]:
    partitions = [{"topic": TOPIC, "partition": partition, "offset": offset}]
    return {"cluster": "demo", "partitions": partitions, "reason": "group accept"}


async def transactions(client: httpx.AsyncClient) -> float:
    match = TRANSACTIONS.search((await client.get("/metrics")).text)
    return float(match.group(1)) if match else 0.0


@pytest.mark.timeout(180)
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_two_instances_store_concurrent_posts_in_shared_transactions(kind: str, tmp_path: Path) -> None:
    with emulator_process(tmp_path, TOPIC, PARTITIONS) as emulator:
        async with database_url(kind, tmp_path) as url:
            envs = [service_env(url, emulator.bootstrap, client_id=c) for c in "ab"]
            records = produce(emulator.bootstrap, TOPIC, PARTITIONS, records=5)
            services = await start_services(envs, tmp_path, records)
            db = Database(url)
            try:
                await run(services, db)
            finally:
                await db.close()
                for service in services:
                    service.process.kill()


async def run(services: list[Service], db: Database) -> None:
    clients = [
        httpx.AsyncClient(base_url=str(s.base), timeout=60, headers={"Authorization": f"Bearer {s.token()}"})
        for s in services
    ]
    try:
        posts = [
            clients[i % 2].post("/v1/deletions", json=body(i % PARTITIONS, 1 + i // PARTITIONS))
            for i in range(PLAIN)
        ]
        for k in range(KEYED):
            keyed = {"Idempotency-Key": f"key-{k}"}
            payload = body(k, 4)
            posts += [client.post("/v1/deletions", json=payload, headers=keyed) for client in clients]
        responses = await asyncio.gather(*posts)
        assert [r.status_code for r in responses] == [202] * len(posts), [r.text for r in responses]
        plain = {r.json()["id"] for r in responses[:PLAIN]}
        assert len(plain) == PLAIN
        pairs = [responses[PLAIN + 2 * k : PLAIN + 2 * k + 2] for k in range(KEYED)]
        assert all(a.json()["id"] == b.json()["id"] for a, b in pairs)
        keyed_ids = {a.json()["id"] for a, _ in pairs}
        async with read_session(db.sessionmaker) as session:
            stored = (await session.execute(select(func.count()).select_from(Deletion))).scalar_one()
        assert stored == PLAIN + KEYED
        for deletion_id in plain | keyed_ids:
            assert await db.wait_status(deletion_id, {"succeeded"}, timeout_s=60) == "succeeded"
        assert await db.chain_ok()
        # Fewer commits than requests stored (replays of a key stored earlier cost no commit either).
        assert sum([await transactions(client) for client in clients]) < len(posts)
    finally:
        for client in clients:
            await client.aclose()
