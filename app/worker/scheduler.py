"""The retention scheduler: sweeps due retention policies, one instance per policy at a time.

Each tick looks for enabled policies whose ``next_run_at`` has come (a read, so idle ticks take no write
lock), leases them, sweeps each (``app.services.retention.sweep``), then records the run and gives the
lease back in one transaction with the next run time. While a sweep runs its lease is renewed every
third of the lease time, so a long sweep is never taken over by another instance. A run that created a
deletion, was denied or failed is audited (``policy.swept``); a run with nothing to delete, or waiting
for the previous sweep's deletions, is only recorded in the policy's runs. After a crash the lease
expires and any instance takes the policy again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from app.adapters.db.repositories import policies as repo
from app.adapters.db.retention_models import PolicyRun, RetentionPolicy
from app.adapters.db.session import read_session, write_transaction
from app.audit import append_event, events
from app.audit.events import Actor
from app.services.retention.sweep import MAX_SKIPPED_LISTED, MAX_WARNINGS, SweepResult, sweep
from app.services.runtime import Runtime
from app.worker import metrics
from app.worker.executor import default_instance_id
from app.worker.periodic import Periodic

log = logging.getLogger("kafka_purge.retention")

DEFAULT_LEASE_SECONDS = 300.0


def utcnow() -> datetime:
    return datetime.now(UTC)


def _skipped_list(result: SweepResult) -> list[dict[str, object]]:
    items = sorted(result.plan.skipped.items())[:MAX_SKIPPED_LISTED]
    return [
        {"topic": tp.topic, "partition": tp.partition, "reason": s.reason.value, "detail": s.detail}
        for tp, s in items
    ]


class RetentionScheduler:
    def __init__(
        self,
        runtime: Runtime,
        *,
        instance_id: str | None = None,
        tick_seconds: float | None = None,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
    ) -> None:
        self._runtime = runtime
        self.instance_id = instance_id or default_instance_id()
        poll = runtime.settings.worker.poll_interval_seconds
        self._tick = tick_seconds if tick_seconds is not None else min(max(poll, 0.05), 1.0)
        self._lease_seconds = lease_seconds
        self._periodic = Periodic(
            self.run_once, self._tick, name=f"retention scheduler {self.instance_id}", log=log
        )

    @property
    def running(self) -> bool:
        return self._periodic.running

    def wake(self) -> None:
        self._periodic.wake()

    async def start(self) -> None:
        await self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()

    async def _any_due(self, now: datetime) -> bool:
        query = (
            select(RetentionPolicy.id)
            .where(RetentionPolicy.enabled.is_(True), RetentionPolicy.next_run_at <= now)
            .limit(1)
        )
        async with read_session(self._runtime.sessionmaker) as session:
            return (await session.execute(query)).first() is not None

    async def run_once(self) -> int:
        """Sweep every policy due now that no other instance holds; the number swept."""
        now = utcnow()
        if not await self._any_due(now):
            return 0
        async with write_transaction(self._runtime.sessionmaker) as session:
            ids = await repo.claim_due(
                session, owner=self.instance_id, now=now, lease_seconds=self._lease_seconds
            )
        for policy_id in ids:
            await self.sweep_policy(policy_id)
        return len(ids)

    async def sweep_policy(self, policy_id: str) -> PolicyRun | None:
        async with read_session(self._runtime.sessionmaker) as session:
            policy = await repo.get_policy_by_id(session, policy_id)
        if policy is None:
            return None
        started = utcnow()
        renewal = asyncio.create_task(self._renew_lease(policy_id), name=f"lease of policy {policy_id}")
        try:
            result = await sweep(self._runtime, policy)
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal
        return await self._record(policy, started, result)

    async def _renew_lease(self, policy_id: str) -> None:
        """Extend the lease every third of its time until cancelled (the sweep ended)."""
        while True:
            await asyncio.sleep(self._lease_seconds / 3)
            until = utcnow() + timedelta(seconds=self._lease_seconds)
            try:
                async with write_transaction(self._runtime.sessionmaker) as session:
                    held = await repo.renew(session, policy_id, owner=self.instance_id, until=until)
            except Exception:  # a renewal that fails is tried again; the sweep goes on
                log.exception("renewing the lease of policy %s failed", policy_id)
                continue
            if not held:
                log.warning("the lease of policy %s was lost during its sweep", policy_id)
                return

    async def _record(self, policy: RetentionPolicy, started: datetime, result: SweepResult) -> PolicyRun:
        finished = utcnow()
        warnings = (result.plan.warnings + result.warnings)[:MAX_WARNINGS]
        run = PolicyRun(
            policy_id=policy.id,
            instance_id=self.instance_id,
            started_at=started,
            finished_at=finished,
            status=result.status,
            partitions_matched=result.matched,
            partitions_planned=len(result.plan.deletions),
            partitions_skipped=len(result.plan.skipped),
            skip_counts=result.plan.skip_counts(),
            skipped=_skipped_list(result),
            warnings=warnings,
            deletion_id=result.deletion_id,
            deletion_ids=list(result.deletion_ids),
            error=result.error,
        )
        async with write_transaction(self._runtime.sessionmaker) as session:
            await repo.add_run(session, run)
            if result.status not in ("nothing_to_delete", "waiting"):
                owner = Actor(policy.owner, policy.owner_host)
                swept = events.policy_swept(
                    owner,
                    policy.cluster,
                    policy=policy.name,
                    run_id=run.id,
                    status=result.status,
                    partitions_planned=run.partitions_planned,
                    deletion_id=result.deletion_id,
                    deletion_ids=run.deletion_ids,
                    skip_counts=run.skip_counts,
                    warnings=warnings,
                    error=result.error,
                    at=finished,
                )
                await append_event(session, swept)
            await repo.release(session, policy.id, owner=self.instance_id, now=finished, ran=True)
        metrics.SWEEPS.labels(policy.cluster, result.status).inc()
        for reason, count in result.plan.skip_counts().items():
            metrics.SWEEP_SKIPS.labels(policy.cluster, reason).inc(count)
        for warning in result.plan.warnings:
            log.warning("policy %s/%s: %s", policy.cluster, policy.name, warning)
        return run
