"""Report a Structured Streaming query's consumed offsets to kafka-purge, after every batch.

``PurgeProgressListener`` is a PySpark ``StreamingQueryListener``. Spark emits a progress event after
``commits/<N>`` is written, so a batch's source ``endOffset`` is what the query will never read again.
The listener sends ``PUT /v1/clusters/{cluster}/consumers/{name}/progress`` with
``{query_id, run_id, batch_id, offsets: {topic: {partition: offset}}}``.

It never blocks or breaks the query: the callback only parses and enqueues; a daemon thread sends, with
retries and capped exponential backoff. The queue is bounded and drops the oldest report when full,
which loses nothing that matters: a newer report of the same query covers every older one (offsets
only grow, and the service keeps the highest). A report superseded while it is being retried is dropped
for the same reason. Failures are logged, never raised into Spark.

    spark.streams.addListener(PurgeProgressListener(
        "https://purge.example.com", ClientCredentials(token_url, "etl", secret), "orders-enricher",
        cluster="main"))
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
from pyspark.sql.streaming.listener import StreamingQueryListener

from app.integrations.spark.checkpoint import CheckpointError, TopicOffsets, parse_source_offset

log = logging.getLogger("kafka_purge.spark.listener")

TokenProvider = Callable[[], str | None]
RETRY_STATUSES = frozenset({401, 408, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class ProgressReport:
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


def end_offsets(sources: Iterable[Any]) -> TopicOffsets:
    """Merged Kafka-style ``endOffset`` of every source (a JSON string in PySpark 4, a dict in the
    progress JSON); other kinds of sources are ignored; a partition read twice keeps the lower offset."""
    merged: TopicOffsets = {}
    for source in sources:
        raw = source.get("endOffset") if isinstance(source, Mapping) else getattr(source, "endOffset", None)
        if raw is None:
            continue
        try:
            offsets = parse_source_offset(raw if isinstance(raw, str) else json.dumps(raw))
        except CheckpointError:
            continue
        for topic, partitions in (offsets or {}).items():
            target = merged.setdefault(topic, {})
            for partition, offset in partitions.items():
                target[partition] = min(offset, target.get(partition, offset))
    return merged


def report_from_progress(progress: Any) -> ProgressReport | None:
    """The report for one ``StreamingQueryProgress`` (or its JSON as a dict); None without Kafka offsets."""
    if isinstance(progress, Mapping):
        query_id, run_id, batch_id = progress["id"], progress["runId"], progress["batchId"]
        sources = progress.get("sources") or []
    else:
        query_id, run_id, batch_id = progress.id, progress.runId, progress.batchId
        sources = progress.sources or []
    offsets = end_offsets(sources)
    if not offsets:
        return None
    return ProgressReport(str(query_id), str(run_id), int(batch_id), offsets)


class ClientCredentials:
    """A token provider: OAuth 2 client credentials, cached until shortly before the token expires."""

    def __init__(
        self, token_url: str, client_id: str, client_secret: str, *, timeout_s: float = 10.0
    ) -> None:
        self._url = token_url
        self._auth = (client_id, client_secret)
        self._timeout_s = timeout_s
        self._token: str | None = None
        self._expires = 0.0
        self._lock = threading.Lock()

    def __call__(self) -> str | None:
        with self._lock:
            if self._token is None or time.monotonic() >= self._expires:
                response = httpx.post(
                    self._url,
                    data={"grant_type": "client_credentials"},
                    auth=self._auth,
                    timeout=self._timeout_s,
                )
                response.raise_for_status()
                payload = response.json()
                self._token = str(payload["access_token"])
                self._expires = time.monotonic() + max(float(payload.get("expires_in", 60)) - 30, 5)
            return self._token

    def invalidate(self) -> None:
        with self._lock:
            self._token = None


class ProgressSender:
    """The bounded queue and the daemon thread that sends reports (no Spark needed: testable alone)."""

    def __init__(
        self,
        url: str,
        token_provider: TokenProvider,
        consumer_name: str,
        *,
        cluster: str,
        max_queue: int = 1000,
        timeout_s: float = 5.0,
        backoff_initial_s: float = 0.2,
        backoff_max_s: float = 30.0,
    ) -> None:
        self.endpoint = (
            f"{url.rstrip('/')}/v1/clusters/{quote(cluster, safe='')}/consumers/"
            f"{quote(consumer_name, safe='')}/progress"
        )
        self._token_provider = token_provider
        self._queue: deque[ProgressReport] = deque(maxlen=max_queue)
        self._cond = threading.Condition()
        self._timeout_s = timeout_s
        self._backoff = (backoff_initial_s, backoff_max_s)
        self._busy = False
        self._closed = False
        self.submitted = 0
        self.sent = 0
        self.dropped = 0
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
                self.dropped += 1
                log.warning("progress queue full: dropped the report of batch %s", self._queue[0].batch_id)
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

    def _run(self) -> None:
        with httpx.Client(timeout=self._timeout_s) as client:
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

    def _deliver(self, client: httpx.Client, report: ProgressReport) -> None:
        delay, ceiling = self._backoff
        attempt = 0
        while True:
            attempt += 1
            status = self._send_once(client, report)
            if status is not None and status < 300:
                self.sent += 1
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

    def _send_once(self, client: httpx.Client, report: ProgressReport) -> int | None:
        try:
            token = self._token_provider()
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            response = client.put(self.endpoint, json=report.body(), headers=headers)
        except (httpx.HTTPError, OSError) as exc:
            log.warning("progress endpoint unreachable: %r", exc)
            return None
        if response.status_code == 401 and hasattr(self._token_provider, "invalidate"):
            self._token_provider.invalidate()
        return response.status_code


class PurgeProgressListener(StreamingQueryListener):
    """Reports each committed batch's Kafka end offsets of every query of the session to kafka-purge."""

    def __init__(
        self, url: str, token_provider: TokenProvider, consumer_name: str, *, cluster: str, **options: Any
    ) -> None:
        super().__init__()
        self.sender = ProgressSender(url, token_provider, consumer_name, cluster=cluster, **options)

    def onQueryStarted(self, event: Any) -> None:  # noqa: N802 - PySpark's names
        log.info("query %s started (run %s)", event.id, event.runId)

    def onQueryProgress(self, event: Any) -> None:  # noqa: N802
        try:
            report = report_from_progress(event.progress)
        except Exception:  # never let a parsing surprise reach Spark's listener bus
            log.exception("cannot read a progress event")
            return
        if report is not None:
            self.sender.submit(report)

    def onQueryIdle(self, event: Any) -> None:  # noqa: N802
        return None

    def onQueryTerminated(self, event: Any) -> None:  # noqa: N802
        log.info(
            "query %s terminated; %s reports sent, %s dropped",
            event.id,
            self.sender.sent,
            self.sender.dropped,
        )
