"""Concurrent claimers on one database (separate engines, as separate instances have) never share a row."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime

from helpers.worker import Target, deletion_status, insert_deletion, partitions_of
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories import claims as repo
from app.adapters.db.repositories.write_back import PartitionUpdate
from app.adapters.db.session import create_engine, make_sessionmaker, write_transaction
from app.domain.deletion_requests import PartitionStatus
from app.worker.outcomes import apply_updates

ROWS = 3_000


async def claimer(
    sessionmaker: async_sessionmaker[AsyncSession], owner: str, seen: list[tuple[int, int]]
) -> None:
    while True:
        now = datetime.now(UTC)
        async with write_transaction(sessionmaker) as session:
            claims = await repo.claim_due(session, owner=owner, now=now, lease_seconds=60, limit=100)
        if not claims:
            return
        seen.extend((c.id, c.fence) for c in claims)
        updates = [
            PartitionUpdate(
                c.id, c.fence, PartitionStatus.SUCCEEDED, c.resolved_offset, None, None, None, now
            )
            for c in claims
        ]
        result = await apply_updates(
            sessionmaker, owner=owner, claims={c.id: c for c in claims}, updates=updates, now=now
        )
        assert result.stale == 0


async def test_concurrent_instances_never_claim_the_same_row(migrated_url: str) -> None:
    engines = [create_engine(migrated_url, pool_size=2) for _ in range(3)]
    try:
        makers = [make_sessionmaker(engine) for engine in engines]
        deletion_id = await insert_deletion(makers[0], [Target("t", p, 1) for p in range(ROWS)])
        seen: dict[str, list[tuple[int, int]]] = {f"w{i}": [] for i in range(3)}
        await asyncio.gather(
            *(claimer(maker, owner, seen[owner]) for maker, owner in zip(makers, seen, strict=True))
        )
        everything = Counter(pair for pairs in seen.values() for pair in pairs)
        assert len(everything) == ROWS
        assert max(everything.values()) == 1
        # Each row was claimed exactly once, by one instance, with fence 1.
        assert {fence for _, fence in everything} == {1}
        rows = await partitions_of(makers[0], deletion_id)
        assert {(r.status, r.attempts, r.lease_expires_at) for r in rows} == {("succeeded", 1, None)}
        # The rows name their (only) claimer, as the instance saw it.
        claimed_by = {row_id: owner for owner, pairs in seen.items() for row_id, _ in pairs}
        assert all(r.lease_owner == claimed_by[r.id] for r in rows)
        assert await deletion_status(makers[0], deletion_id) == "succeeded"
    finally:
        for engine in engines:
            await engine.dispose()
