"""The queue and the daemon thread that deliver progress reports to kafka-purge (no Spark needed).

``submit`` never blocks: the queue is bounded and drops the oldest report when full, which loses
nothing that matters, since a newer report of the same query covers every older one (offsets only grow
and the service keeps the highest). A report superseded while it is being retried is dropped for the
same reason. Delivery retries unreachable servers and ``RETRY_STATUSES`` with capped exponential backoff;
after a 401 the next attempt fetches a fresh token. Failures are logged, never raised.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx2

from kafka_purge_spark.offsets import TopicOffsets
from kafka_purge_spark.tokens import ClientCredentials, OAuthError, authorize

log = logging.getLogger("kafka_purge_spark.sender")

RETRY_STATUSES = frozenset({401, 408, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class ProgressReport:
    """One batch of one query: the Kafka offsets it will never read again."""

    query_id: str
    run_id: str
    batch_id: int
    offsets: TopicOffsets

    def body(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "run_id": self.run_id,
            "batch_id": self.batch_id,
            "offsets": {
                topic: {str(p): o for p, o in sorted(parts.items())} for topic, parts in self.offsets.items()
            },
        }


class ProgressSender:
    """Sends reports to ``PUT {url}/v1/clusters/{cluster}/consumers/{consumer_name}/progress``.

    ``credentials`` authenticate with the client-credentials grant; ``token`` is a fixed bearer token
    instead; with neither, requests carry no ``Authorization``.
    """

    def __init__(
        self,
        url: str,
        consumer_name: str,
        *,
        cluster: str,
        credentials: ClientCredentials | None = None,
        token: str | None = None,
        max_queue: int = 1000,
        timeout_s: float = 5.0,
        backoff_initial_s: float = 0.2,
        backoff_max_s: float = 30.0,
    ) -> None:
        self.endpoint = (
            f"{url.rstrip('/')}/v1/clusters/{quote(cluster, safe='')}/consumers/"
            f"{quote(consumer_name, safe='')}/progress"
        )
        self._credentials = credentials
        self._token = token
        self._queue: deque[ProgressReport] = deque(maxlen=max_queue)
        self._cond = threading.Condition()
        self._timeout_s = timeout_s
        self._backoff = (backoff_initial_s, backoff_max_s)
        self._busy = False
        self._closed = False
        self._renew_token = False
        self.submitted = 0
        self.sent = 0
        self.dropped = 0
        self._dropped_warned = 0
        self._thread = threading.Thread(target=self._run, name="purge-progress-sender", daemon=True)
        self._thread.start()

    @property
    def queued(self) -> int:
        with self._cond:
            return len(self._queue)

    def submit(self, report: ProgressReport) -> None:
        """Enqueue without blocking; the oldest report makes room when the queue is full."""
        with self._cond:
            if self._closed:
                return
            self.submitted += 1
            if len(self._queue) == self._queue.maxlen:
                # Each report carries the query's whole position, so a newer one replaces what an older
                # one said; one warning per stall, not one per batch.
                if self.dropped == self._dropped_warned:
                    log.warning(
                        "progress queue full (%s reports): the service does not keep up; dropping the "
                        "oldest reports, each superseded by a newer one",
                        self._queue.maxlen,
                    )
                self.dropped += 1
            self._queue.append(report)
            self._cond.notify()

    def flush(self, timeout_s: float) -> bool:
        """Wait until every queued report was sent or given up on; False on timeout."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while self._queue or self._busy:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    def close(self, timeout_s: float = 5.0) -> None:
        self.flush(timeout_s)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout_s)

    def _client(self) -> httpx2.Client:
        if self._credentials is not None:
            return self._credentials.client(timeout=self._timeout_s)
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else {}
        return httpx2.Client(timeout=self._timeout_s, headers=headers)

    def _run(self) -> None:
        with self._client() as client:
            while True:
                with self._cond:
                    while not self._queue and not self._closed:
                        self._cond.wait()
                    if self._closed:
                        return
                    report = self._queue.popleft()
                    self._busy = True
                try:
                    self._deliver(client, report)
                except Exception:  # a sender bug must never end the thread
                    log.exception("progress sender failed on batch %s", report.batch_id)
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _superseded(self, report: ProgressReport) -> bool:
        with self._cond:
            return self._closed or any(
                r.query_id == report.query_id and r.batch_id >= report.batch_id for r in self._queue
            )

    def _deliver(self, client: httpx2.Client, report: ProgressReport) -> None:
        delay, ceiling = self._backoff
        attempt = 0
        while True:
            attempt += 1
            status = self._send_once(client, report)
            if status is not None and status < 300:
                self.sent += 1
                with self._cond:
                    if self.dropped > self._dropped_warned:
                        log.warning(
                            "progress delivered again after %s dropped reports",
                            self.dropped - self._dropped_warned,
                        )
                        self._dropped_warned = self.dropped
                return
            if status is not None and status not in RETRY_STATUSES:
                log.error("progress of batch %s refused with HTTP %s; not retried", report.batch_id, status)
                return
            if self._superseded(report):
                return
            log.warning("progress of batch %s not delivered (attempt %s); retrying", report.batch_id, attempt)
            with self._cond:
                self._cond.wait(delay)
            delay = min(delay * 2, ceiling)

    def _send_once(self, client: httpx2.Client, report: ProgressReport) -> int | None:
        """The service's HTTP status, or None when it or the token endpoint could not be used."""
        try:
            authorize(client, renew=self._renew_token)
            self._renew_token = False
            response = client.put(self.endpoint, json=report.body())
        except (httpx2.HTTPError, OSError) as exc:
            log.warning("progress endpoint or token endpoint unreachable: %r", exc)
            return None
        except (OAuthError, ValueError) as exc:
            log.warning("no token from the token endpoint: %s", exc)
            return None
        self._renew_token = response.status_code == 401
        return response.status_code
