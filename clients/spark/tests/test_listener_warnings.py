"""The listener says when it cannot help: a query without a Kafka source (rate, files) or whose Kafka
source's offsets it cannot read gets one warning naming the query and why, however many batches it runs;
a query it can report gets none (tests/real_kafka/test_spark_queries.py checks that on Spark's own Kafka
source)."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import wait_until
from pyspark.sql.streaming.listener import StreamingQueryListener

from kafka_purge_spark import PurgeProgressListener

LOGGER = "kafka_purge_spark.listener"


class ProgressCount(StreamingQueryListener):
    """Counts progress events per query. Spark's listener bus calls listeners one after the other, in the
    order they were added: once this one (added last) has seen an event, the listener under test has too."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}

    def onQueryStarted(self, event: Any) -> None:
        return None

    def onQueryProgress(self, event: Any) -> None:
        name = str(event.progress.name)
        self.seen[name] = self.seen.get(name, 0) + 1

    def onQueryIdle(self, event: Any) -> None:
        return None

    def onQueryTerminated(self, event: Any) -> None:
        return None


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING]


def test_queries_without_a_kafka_source_get_one_warning_each(
    spark: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    listener = PurgeProgressListener("http://127.0.0.1:9", "enricher", cluster="main", token="t")
    count = ProgressCount()
    spark.streams.addListener(listener)
    spark.streams.addListener(count)
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    rate = spark.readStream.format("rate").option("rowsPerSecond", 5).load()
    files = spark.readStream.format("text").load(str(landing))
    queries = [
        frame.writeStream.format("noop")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / name))
        .trigger(processingTime="200 milliseconds")
        .start()
        for name, frame in (("ticks", rate), ("landing", files))
    ]
    try:
        wait_until(lambda: count.seen.get("ticks", 0) >= 3, message="three batches of the rate query")
        wait_until(lambda: count.seen.get("landing", 0) >= 1, message="the first batch of the files")
        (landing / "b.txt").write_text("three\n", encoding="utf-8")
        wait_until(lambda: count.seen.get("landing", 0) >= 2, message="a second batch of the files")
    finally:
        for query in queries:
            query.stop()
        spark.streams.removeListener(count)
        spark.streams.removeListener(listener)
        listener.sender.close(timeout_s=1)
    ticks, landing_ids = (str(query.id) for query in queries)
    found = sorted(warnings_of(caplog))
    assert len(found) == 2, found
    assert found[0].startswith(f"query 'landing' (id {landing_ids}) reads no Kafka source (FileStreamSource[")
    assert found[1].startswith(f"query 'ticks' (id {ticks}) reads no Kafka source (RateStreamV2[")
    assert all(w.endswith("kafka-purge-spark sends no progress of it for consumer 'enricher'") for w in found)
    assert listener.sender.submitted == 0


def test_a_kafka_source_whose_offsets_cannot_be_read_gets_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    listener = PurgeProgressListener("http://127.0.0.1:9", "enricher", cluster="main", token="t")
    source = {"description": "KafkaV2[Subscribe[orders]]", "endOffset": '{"orders": {"0": "soon"}}'}
    for batch in range(3):
        progress = {"id": "q-1", "runId": "r", "name": None, "batchId": batch, "sources": [source]}
        listener.onQueryProgress(SimpleNamespace(progress=progress))
    listener.sender.close(timeout_s=1)
    assert warnings_of(caplog) == [
        "query None (id q-1) cannot read the offsets of its Kafka source KafkaV2[Subscribe[orders]]: "
        '{"orders": {"0": "soon"}}: kafka-purge-spark sends no progress of it for consumer \'enricher\''
    ]
    assert listener.sender.submitted == 0


def test_no_warning_before_a_first_batch_or_for_a_readable_kafka_source(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    listener = PurgeProgressListener("http://127.0.0.1:9", "enricher", cluster="main", token="t")
    kafka = {"description": "KafkaV2[Subscribe[orders]]", "endOffset": '{"orders": {"0": 4}}'}
    events = [
        {
            "id": "q",
            "runId": "r",
            "batchId": 0,
            "sources": [{"description": "RateStreamV2[]", "endOffset": None}],
        },
        {
            "id": "q",
            "runId": "r",
            "batchId": 0,
            "sources": [kafka, {"description": "RateStreamV2[]", "endOffset": 9}],
        },
    ]
    for progress in events:
        listener.onQueryProgress(SimpleNamespace(progress=progress))
    listener.sender.close(timeout_s=0.2)
    assert warnings_of(caplog) == []
    assert listener.sender.submitted == 1
