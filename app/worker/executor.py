"""The durable executor: claim due partitions, send DeleteRecords, write the outcomes back, repeat.

Each service instance runs one ``Executor`` with a unique ``instance_id`` (the lease owner). The loop
claims up to ``worker.claim_batch`` rows at a time and works on up to ``MAX_BATCHES`` claimed batches at
once, so one batch waiting in a broker's purgatory does not hold up the others. While a batch is out,
its leases are renewed every third of the lease; a batch whose lease passed to another claim still
finishes its call, but the fence makes its write-back change nothing. After a crash, leases simply
expire and any instance claims the rows again: the stored concrete offset makes the resend harmless.

A deletion accepted by this instance skips the claim: the transaction that stores it inserts its first
batch already claimed by this executor (``reserve``), which works it as soon as that commits (``take``;
``app.services.deletions.group_commit``). Large batches run with the cyclic garbage collector paused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import secrets
import socket
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from datetime import UTC, datetime, timedelta

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.faults import fault_name, is_outage
from app.adapters.db.repositories import claims as repo
from app.adapters.db.repositories import write_back
from app.adapters.db.session import write_transaction
from app.domain.ports import Claim, KafkaGateway, Lease, PartitionOutcome, Requester
from app.logs import log_context
from app.settings import Settings
from app.worker import metrics
from app.worker.dispatch import (
    GroupReport,
    Reauthorizer,
    SendGroup,
    group_claims,
    leases_kept,
    send_group,
    withhold_revoked,
)
from app.worker.outcomes import WriteBack
from app.worker.retries import Policy, decide

log = logging.getLogger("kafka_purge.worker")

MAX_BATCHES = 4
DEFAULT_REQUEST_TIMEOUT_MS = 40_000


def default_instance_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def utcnow() -> datetime:
    return datetime.now(UTC)


class Executor:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        gateway: KafkaGateway,
        settings: Settings,
        instance_id: str | None = None,
        reauthorizer: Reauthorizer | None = None,
    ) -> None:
        self._sessionmaker = sessionmaker
        self._gateway = gateway
        self._reauthorizer = reauthorizer
        self._worker = settings.worker
        self._policies = {
            name: Policy.from_settings(settings.worker, cluster.request_timeout_ms)
            for name, cluster in settings.clusters.items()
        }
        self._default_policy = Policy.from_settings(settings.worker, DEFAULT_REQUEST_TIMEOUT_MS)
        self.instance_id = instance_id or default_instance_id()
        self._rng = random.Random()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._batches: set[asyncio.Task[int]] = set()
        self._reserved = 0  # batch slots promised to new deletions being stored (``reserve``)
        self._stopping = False

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def wake(self) -> None:
        """Look for work now (the API calls this after accepting a deletion)."""
        self._wake.set()

    def reserve(self) -> Lease | None:
        """A lease for the first batch of a deletion about to be stored
        (``app.services.deletions.group_commit``), when this executor runs and has a batch slot free; one
        slot always stays for claiming, so rows stored pending (by API-only instances, or when this
        executor is busy) and retries keep moving."""
        if not self.running or self._stopping or len(self._batches) + self._reserved >= MAX_BATCHES - 1:
            return None
        self._reserved += 1
        expires_at = utcnow() + timedelta(seconds=self._worker.lease_seconds)
        return Lease(self.instance_id, expires_at, self._worker.claim_batch)

    def take(self, lease: Lease, claims: Sequence[Claim], requesters: Mapping[str, Requester]) -> None:
        """Work ``claims``, stored and committed with ``lease``, at once; ``requesters``: who asked for
        their deletions, as just stored (re-checking authorization need not read them back). Rows this
        does not send (the executor is stopping, or storing took so long that under half the lease is
        left, too close to the first renewal a third of a lease from now) stay leased until the lease
        runs out; then any instance claims them."""
        self._reserved -= 1
        left = (lease.expires_at - utcnow()).total_seconds()
        if self._stopping or not claims or left < self._worker.lease_seconds / 2:
            return
        metrics.CLAIMED.inc(len(claims))
        self._start_batch(claims, requesters)

    def release(self, lease: Lease) -> None:
        """Give back the batch slot of a ``reserve`` whose deletion was not stored (rolled back)."""
        self._reserved -= 1

    async def start(self) -> None:
        if self.running:
            return
        self._stopping = False
        self._task = asyncio.create_task(self._run(), name=f"executor {self.instance_id}")
        log.info("executor %s started", self.instance_id, extra={"instance_id": self.instance_id})

    async def stop(self, grace_seconds: float = 5.0) -> None:
        """Stop claiming; let claimed batches finish for ``grace_seconds``, then cancel them and give their
        leases back so another instance can take the rows at once."""
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            _, pending = await asyncio.wait({self._task}, timeout=grace_seconds)
            for task in (*pending, *self._batches):
                task.cancel()
            await asyncio.gather(self._task, *self._batches, return_exceptions=True)
            self._task = None
        try:
            async with write_transaction(self._sessionmaker) as session:
                released = await repo.release_leases(session, owner=self.instance_id, now=utcnow())
        except Exception:
            log.exception("executor could not release its leases; they expire on their own")
            released = 0
        log.info(
            "executor %s stopped, %d leases given back",
            self.instance_id,
            released,
            extra={"instance_id": self.instance_id, "released": released},
        )

    async def run_once(self) -> int:
        """Claim one batch and work it to the end; the number of partitions claimed."""
        claims = await self._claim()
        if claims:
            await self._process(claims, {})
        return len(claims)

    async def _run(self) -> None:
        while not self._stopping:
            claims: list[Claim] = []
            if len(self._batches) + self._reserved < MAX_BATCHES:
                self._wake.clear()
                try:
                    claims = await self._claim()
                except Exception as exc:  # the database is away: keep the loop (and readiness) alive
                    if is_outage(exc):
                        log.warning("claiming failed: database unavailable (%s); retrying", fault_name(exc))
                    else:
                        log.exception("claiming failed; retrying after the poll interval")
            if claims:
                self._start_batch(claims)
                continue
            await self._idle()
        if self._batches:
            await asyncio.gather(*self._batches, return_exceptions=True)

    def _start_batch(
        self, claims: Sequence[Claim], requesters: Mapping[str, Requester] | None = None
    ) -> None:
        task = asyncio.create_task(self._process(claims, requesters or {}))
        self._batches.add(task)
        task.add_done_callback(self._batches.discard)

    async def _idle(self) -> None:
        waker = asyncio.create_task(self._wake.wait())
        try:
            await asyncio.wait(
                {waker, *self._batches},
                timeout=self._worker.poll_interval_seconds,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            waker.cancel()

    async def _claim(self) -> list[Claim]:
        async with write_transaction(self._sessionmaker) as session:
            claims = await repo.claim_due(
                session,
                owner=self.instance_id,
                now=utcnow(),
                lease_seconds=self._worker.lease_seconds,
                limit=self._worker.claim_batch,
            )
        metrics.CLAIMED.inc(len(claims))
        return claims

    async def _mark_started(self, claims: Sequence[Claim]) -> None:
        try:
            async with write_transaction(self._sessionmaker) as session:
                await write_back.mark_started(session, sorted({c.deletion_id for c in claims}), now=utcnow())
        except DBAPIError:
            # Cosmetic only: the first write-back rolls the status up anyway.
            log.warning("could not mark %d claimed partitions' deletions as started", len(claims))

    async def _process(self, claims: Sequence[Claim], requesters: Mapping[str, Requester]) -> int:
        groups = group_claims(claims, utcnow(), self._policy_map(claims))
        # Marking the deletions started runs alongside the sends, after them.
        results = await asyncio.gather(
            *(self._send_and_apply(group, requesters) for group in groups),
            self._mark_started(claims),
            return_exceptions=True,
        )
        for result in results:
            if isinstance(result, Exception):
                # The rows stay leased until the lease expires; then they are claimed and sent again.
                log.error("processing a claimed batch failed", exc_info=result)
        return len(claims)

    def _policy_map(self, claims: Sequence[Claim]) -> dict[str, Policy]:
        return {c.cluster: self._policies.get(c.cluster, self._default_policy) for c in claims}

    async def _send_and_apply(self, group: SendGroup, requesters: Mapping[str, Requester]) -> None:
        """Send ``group`` and write each leader's answer back as it arrives (``app.worker.outcomes``)."""
        started = time.monotonic()
        policy = self._policies.get(group.cluster, self._default_policy)
        claims = {claim.id: claim for claim in group.claims}
        writer = WriteBack(self._sessionmaker, self.instance_id, claims)
        report = GroupReport(group.cluster)
        answered = started
        async with leases_kept(
            self._sessionmaker, self.instance_id, self._worker.lease_seconds, writer.leased
        ):
            answers = self._send(group, requesters)
            async with contextlib.aclosing(answers):
                async for outcomes in answers:
                    now, answered = utcnow(), time.monotonic()
                    updates = [decide(claims[i], o, now, policy, self._rng) for i, o in outcomes.items()]
                    for update in updates:
                        report.add(claims[update.id], update)
                    await writer.write(updates, now)
        metrics.SEND_SECONDS.labels(group.cluster).observe(answered - started)
        result = writer.result
        for status, count in result.applied.items():
            metrics.OUTCOMES.labels(status=status.value).inc(count)
        metrics.STALE_WRITES.inc(result.stale)
        report.log(time.monotonic() - started)
        with log_context(request_id=None, principal=None):  # a group may mix requests
            log.debug(
                "applied outcomes: cluster=%s partitions=%d applied=%s stale=%d completed=%s",
                group.cluster,
                len(group.claims),
                {s.value: n for s, n in result.applied.items()},
                result.stale,
                result.completed,
                extra={"instance_id": self.instance_id, "cluster": group.cluster},
            )

    async def _send(
        self, group: SendGroup, requesters: Mapping[str, Requester]
    ) -> AsyncGenerator[dict[int, PartitionOutcome], None]:
        """Outcomes by row id, as the leaders answer; partitions whose requester lost DELETE are not sent
        (``app.worker.dispatch``)."""
        if self._reauthorizer is not None:
            group, withheld = await withhold_revoked(
                self._reauthorizer, self._sessionmaker, group, requesters
            )
            if withheld:
                yield withheld
        if group.claims:
            answers = send_group(self._gateway, group)
            async with contextlib.aclosing(answers):
                async for outcomes in answers:
                    yield outcomes
