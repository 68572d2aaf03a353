"""Delivers the webhook outbox, where the executor runs (the app, ``serve --workers-only``).

Each tick looks for due deliveries (a read, so idle ticks take no write lock) and claims as many as there
is room for (at most ``claim_batch`` in flight) under a lease
(``app.adapters.db.repositories.webhook_deliveries``). Each is POSTed on its own
(``app.adapters.webhook_client``: only to addresses the target policy permits, checked after resolving; a
timeout per attempt, no redirects followed; signed as Standard Webhooks says:
``app.domain.webhook_events``), and its outcome written as soon as it is known, fenced: delivered (2xx),
retried later with capped exponential backoff, or dead-lettered after ``max_attempts``. Any exception in
an attempt is a failed attempt. A slow receiver holds only its own attempts. Delivery is at least once: a
process that dies mid-attempt leaves the lease to expire, and any instance attempts the delivery again;
receivers deduplicate on ``webhook-id``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories import webhook_deliveries as repo
from app.adapters.db.repositories.webhook_deliveries import ClaimedDelivery, Outcome
from app.adapters.db.session import read_session, write_transaction
from app.adapters.webhook_client import WebhookClient
from app.domain.webhook_events import retry_delay, signed_headers
from app.domain.webhook_targets import TargetRefused, parse_target
from app.settings import WebhookSettings
from app.worker import metrics
from app.worker.executor import default_instance_id
from app.worker.periodic import Periodic

log = logging.getLogger("kafka_purge.webhooks")
USER_AGENT = "kafka-purge-webhooks/1"
# What a failed attempt records (``last_error``): whether the target policy refused it, or else only the
# HTTP status an allowed target answered. How a connection failed (refused, reset, timed out, not HTTP)
# is never told apart there: it would make deliveries a port scanner. The log has it, at debug level.
REFUSED = "refused: the target policy does not allow this URL's host"
NO_ANSWER = "failed: no HTTP answer"


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
        self._policy = settings.target_policy()
        self.instance_id = instance_id or default_instance_id()
        self._client: WebhookClient | None = None
        self._in_flight: set[asyncio.Task[None]] = set()
        self._periodic = Periodic(
            self._tick, settings.poll_interval_seconds, name=f"webhooks {self.instance_id}", log=log
        )

    async def start(self) -> None:
        self._client = WebhookClient(
            self._policy,
            timeout_seconds=self._settings.timeout_seconds,
            max_connections=self._settings.claim_batch,
        )
        await self._periodic.start()
        log.info("webhook dispatcher %s running", self.instance_id)

    async def stop(self) -> None:
        """Stop claiming; attempts still in flight are abandoned (retried once their leases run out)."""
        await self._periodic.stop()
        for task in list(self._in_flight):
            task.cancel()
        await self.settle()
        if self._client is not None:
            await self._client.aclose()

    async def settle(self) -> None:
        """Wait until the attempts in flight have ended and their outcomes are written."""
        await asyncio.gather(*self._in_flight, return_exceptions=True)

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
        """Attempt ``delivery`` and write its outcome. Nothing escapes: if the write fails, the lease runs
        out and the delivery is attempted again."""
        try:
            outcome = await self._attempt(delivery)
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
        """One attempt's outcome; any exception in it is a failed attempt."""
        assert self._client is not None
        started = datetime.now(UTC)
        try:
            target = parse_target(delivery.url)
            body = delivery.body.encode()
            headers = signed_headers(delivery.secret, delivery.event_id, int(time.time()), body)
            status = await self._client.post(target, body, {**headers, "user-agent": USER_AGENT})
        except TargetRefused as exc:
            log.info("webhook delivery %d refused: %s", delivery.id, exc)
            return self._failed(delivery, started, None, REFUSED)
        except Exception as exc:
            # The exception's text never names the URL's path or query (httpcore's and the OS's do not).
            log.debug("webhook delivery %d failed: %s: %s", delivery.id, type(exc).__name__, exc)
            return self._failed(delivery, started, None, NO_ANSWER)
        if 200 <= status < 300:
            return Outcome(delivery.id, delivery.fence, True, status, None, None)
        return self._failed(delivery, started, status, f"failed: HTTP {status}")

    def _failed(
        self, delivery: ClaimedDelivery, started: datetime, status: int | None, error: str
    ) -> Outcome:
        # The next attempt counts from this one's start: its time shows nothing of how long it took.
        retry_at = self._retry_at(delivery.attempts, started)
        return Outcome(delivery.id, delivery.fence, False, status, error, retry_at)

    def _retry_at(self, attempts: int, started: datetime) -> datetime | None:
        """When to try again after ``attempts`` failed attempts; None once they are all spent (dead)."""
        settings = self._settings
        if attempts >= settings.max_attempts:
            return None
        delay = retry_delay(attempts, settings.backoff_initial_seconds, settings.backoff_max_seconds)
        return started + timedelta(seconds=delay)
