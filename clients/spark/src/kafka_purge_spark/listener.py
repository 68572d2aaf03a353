"""Report a Structured Streaming query's consumed offsets to kafka-purge, after every batch.

``PurgeProgressListener`` is a PySpark ``StreamingQueryListener``. Spark emits a progress event after
``commits/<N>`` is written, so a batch's source ``endOffset`` is what the query will never read again.
The listener sends ``PUT /v1/clusters/{cluster}/consumers/{name}/progress`` with
``{query_id, run_id, batch_id, offsets: {topic: {partition: offset}}}``.

It never blocks or breaks the query: the callback only parses and hands the report to a
``ProgressSender``, whose daemon thread delivers it (see ``kafka_purge_spark.sender``). A query it cannot
report (no Kafka source, or offsets it cannot read) gets one warning naming the query and why, since a
retention policy waiting on that query's consumer would otherwise wait in silence.

    from kafka_purge_spark import ClientCredentials, PurgeProgressListener

    spark.streams.addListener(PurgeProgressListener(
        "https://purge.example.com", "orders-enricher", cluster="main",
        credentials=ClientCredentials(token_url, "etl", secret)))
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from pyspark.sql.streaming.listener import StreamingQueryListener

from kafka_purge_spark.offsets import end_offsets, unreadable
from kafka_purge_spark.sender import ProgressReport, ProgressSender

log = logging.getLogger("kafka_purge_spark.listener")


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


class PurgeProgressListener(StreamingQueryListener):
    """Reports each committed batch's Kafka end offsets of every query of the session to kafka-purge."""

    def __init__(self, url: str, consumer_name: str, *, cluster: str, **options: Any) -> None:
        """``options`` go to ``ProgressSender``: ``credentials`` or ``token``, queue size, timeouts."""
        super().__init__()
        self.sender = ProgressSender(url, consumer_name, cluster=cluster, **options)
        self.consumer_name = consumer_name
        self.warned: set[str] = set()

    def onQueryStarted(self, event: Any) -> None:  # noqa: N802 - PySpark's names
        log.info("query %s started (run %s)", event.id, event.runId)

    def onQueryProgress(self, event: Any) -> None:  # noqa: N802
        try:
            report = report_from_progress(event.progress)
            self._warn_once(event.progress)
        except Exception:  # never let a parsing surprise reach Spark's listener bus
            log.exception("cannot read a progress event")
            return
        if report is not None:
            self.sender.submit(report)

    def _warn_once(self, progress: Any) -> None:
        """One warning per query the listener cannot report, with the query's name and id and why."""
        if isinstance(progress, Mapping):
            query_id, name, sources = progress["id"], progress.get("name"), progress.get("sources")
        else:
            query_id, name, sources = progress.id, progress.name, progress.sources
        if str(query_id) in self.warned or (reason := unreadable(sources or [])) is None:
            return
        self.warned.add(str(query_id))
        log.warning(
            "query %r (id %s) %s: kafka-purge-spark sends no progress of it for consumer %r",
            name,
            query_id,
            reason,
            self.consumer_name,
        )

    def onQueryIdle(self, event: Any) -> None:  # noqa: N802
        return None

    def onQueryTerminated(self, event: Any) -> None:  # noqa: N802
        log.info(
            "query %s terminated; %s reports sent, %s dropped",
            event.id,
            self.sender.sent,
            self.sender.dropped,
        )
