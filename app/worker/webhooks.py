"""Delivers the webhook outbox, where the executor runs (the app, ``serve --workers-only``).

Each tick looks for due deliveries (a read, so idle ticks take no write lock) and claims as many as
there is room for (at most ``claim_batch`` in flight) under a lease
(``app.adapters.db.repositories.webhook_deliveries``). Each is POSTed on its own with httpx (a timeout
per attempt, no redirects followed, signed as Standard Webhooks says: ``app.domain.webhooks``), and its
outcome written as soon as it is known, fenced: delivered (2xx), retried later with capped exponential
backoff, or dead-lettered after ``max_attempts``. A slow receiver holds only its own attempts. Delivery is at
least once: a process that dies mid-attempt leaves the lease to expire, and any instance attempts the
delivery again; receivers deduplicate on ``webhook-id``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories import webhook_deliveries as repo
from app.adapters.db.repositories.webhook_deliveries import ClaimedDelivery, Outcome
from app.adapters.db.session import read_session, write_transaction
from app.domain.webhooks import HostAllowList, retry_delay, signed_headers, target_host
from app.settings import WebhookSettings
from app.worker import metrics
from app.worker.executor import default_instance_id
from app.worker.periodic import Periodic

log = logging.getLogger("kafka_purge.webhooks")
MAX_ERROR_LENGTH = 500
USER_AGENT = "kafka-purge-webhooks/1"


class HostRefused(Exception):
    """The target's host is not (or no longer) allowed by ``PURGE_WEBHOOKS_ALLOWED_HOSTS``."""


class WebhookDispatcher:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        settings: WebhookSettings,
        *,
        instance_id: str | None = None,
    ) -> None:
        self._sessionmaker = sessionmaker
        self._settings = settings
        self._allowed = settings.allow_list()
        self.instance_id = instance_id or default_instance_id()
        self._client: httpx.AsyncClient | None = None
        self._in_flight: set[asyncio.Task[None]] = set()
        self._periodic = Periodic(
            self._tick, settings.poll_interval_seconds, name=f"webhooks {self.instance_id}", log=log
        )

    async def start(self) -> None:
        self._client = httpx.AsyncClient(
            timeout=self._settings.timeout_seconds,
            follow_redirects=False,
            trust_env=False,
            headers={"user-agent": USER_AGENT},
        )
        await self._periodic.start()
        log.info("webhook dispatcher %s running", self.instance_id)

    async def stop(self) -> None:
        """Stop claiming; attempts still in flight are abandoned (retried once their leases run out)."""
        await self._periodic.stop()
        for task in list(self._in_flight):
            task.cancel()
        await asyncio.gather(*self._in_flight, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()

    def wake(self) -> None:
        self._periodic.wake()

    async def _tick(self) -> None:
        await self.run_once()

    async def run_once(self) -> int:
        """Claim the due deliveries there is room for and start attempting them; how many were claimed."""
        room = self._settings.claim_batch - len(self._in_flight)
        if room <= 0:
            return 0
        now = datetime.now(UTC)
        async with read_session(self._sessionmaker) as session:
            if not await repo.any_due(session, now):
                return 0
        async with write_transaction(self._sessionmaker) as session:
            claimed = await repo.claim_due(
                session,
                owner=self.instance_id,
                now=now,
                lease_seconds=self._settings.lease_seconds,
                limit=room,
            )
        for delivery in claimed:
            task = asyncio.create_task(self._deliver(delivery), name=f"webhook delivery {delivery.id}")
            self._in_flight.add(task)
            task.add_done_callback(self._in_flight.discard)
        return len(claimed)

    async def _deliver(self, delivery: ClaimedDelivery) -> None:
        """Attempt ``delivery`` and write its outcome (if the write fails, the lease runs out and the
        delivery is attempted again)."""
        outcome = await self._attempt(delivery)
        try:
            async with write_transaction(self._sessionmaker) as session:
                await repo.record_outcomes(session, [outcome], datetime.now(UTC))
        except Exception:
            log.exception("recording the outcome of webhook delivery %d failed", delivery.id)
            return
        result = "delivered" if outcome.delivered else "failed" if outcome.retry_at else "dead"
        metrics.WEBHOOK_ATTEMPTS.labels(result).inc()
        if result == "dead":
            log.warning("webhook delivery %d dead-lettered: %s", outcome.id, outcome.error)
        self.wake()  # a slot is free

    async def _attempt(self, delivery: ClaimedDelivery) -> Outcome:
        assert self._client is not None
        body = delivery.body.encode()
        headers = signed_headers(delivery.secret, delivery.event_id, int(time.time()), body)
        status: int | None = None
        try:
            await _check_allowed(self._allowed, delivery.url)
            response = await self._client.post(delivery.url, content=body, headers=headers)
            status = response.status_code
            if 200 <= status < 300:
                return Outcome(delivery.id, delivery.fence, True, status, None, None)
            error = f"HTTP {status}"
        except (httpx.HTTPError, HostRefused, OSError) as exc:
            error = f"{type(exc).__name__}: {exc}"[:MAX_ERROR_LENGTH]
        return Outcome(delivery.id, delivery.fence, False, status, error, self._retry_at(delivery.attempts))

    def _retry_at(self, attempts: int) -> datetime | None:
        """When to try again after ``attempts`` failed attempts; None once they are all spent (dead)."""
        settings = self._settings
        if attempts >= settings.max_attempts:
            return None
        delay = retry_delay(attempts, settings.backoff_initial_seconds, settings.backoff_max_seconds)
        return datetime.now(UTC) + timedelta(seconds=delay)


async def _check_allowed(allowed: HostAllowList, url: str) -> None:
    """``HostRefused`` unless the allow-list admits the URL's host now (a name it admits only by network
    is resolved: each of its addresses must be in an allowed network)."""
    host = target_host(url)
    if allowed.allows_name(host):
        return
    if allowed.needs_resolving(host):
        infos = await asyncio.get_running_loop().getaddrinfo(host, None)
        if allowed.allows_addresses({str(info[4][0]) for info in infos}):
            return
    raise HostRefused(f"host {host} is not allowed by PURGE_WEBHOOKS_ALLOWED_HOSTS")
