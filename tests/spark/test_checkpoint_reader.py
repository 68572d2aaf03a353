"""The pure-Python checkpoint reader on checkpoints written by real Structured Streaming queries: a
finished query, a batch left in flight by a failing sink, the restart that commits it, a stopped query."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers.spark import Emulator, wait_until

from app.integrations.spark.checkpoint import read_committed_offsets


def start_query(spark: Any, emulator: Emulator, topic: str, folder: Path, fail_flag: Path) -> Any:
    def sink(frame: Any, batch_id: int) -> None:
        if fail_flag.exists():
            raise RuntimeError("sink unavailable")
        frame.write.mode("append").parquet(str(folder / "out"))

    stream = (
        spark.readStream.format("testkafka").option("bootstrap", emulator.bootstrap).option("topic", topic)
    )
    return (
        stream.load()
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", str(folder / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )


def test_reader_follows_commits_not_planned_batches(spark: Any, emulator: Emulator, tmp_path: Path) -> None:
    from pyspark.errors import StreamingQueryException

    topic = f"ckpt-{uuid.uuid4().hex[:8]}"
    emulator.create_topic(topic, 3)
    emulator.produce(topic, [f"a{i}".encode() for i in range(30)], 3)
    fail_flag = tmp_path / "fail"
    checkpoint = tmp_path / "checkpoint"

    start_query(spark, emulator, topic, tmp_path, fail_flag).awaitTermination(120)
    first = read_committed_offsets(str(checkpoint))
    assert first.topic_offsets() == {topic: {0: 10, 1: 10, 2: 10}}
    assert first.in_flight == ()
    assert first.batch_id is not None

    # The sink fails: offsets/<N+1> is written, commits/<N+1> never is.
    emulator.produce(topic, [f"b{i}".encode() for i in range(6)], 3)
    fail_flag.touch()
    query = start_query(spark, emulator, topic, tmp_path, fail_flag)
    with pytest.raises(StreamingQueryException):
        query.awaitTermination(120)
    in_flight = read_committed_offsets(checkpoint.as_uri())
    assert in_flight.batch_id == first.batch_id
    assert in_flight.in_flight == (first.batch_id + 1,)
    assert in_flight.topic_offsets() == first.topic_offsets()
    assert (checkpoint / "offsets" / str(first.batch_id + 1)).exists()

    # Restarted with the sink back, the query re-runs the in-flight batch and commits it.
    fail_flag.unlink()
    start_query(spark, emulator, topic, tmp_path, fail_flag).awaitTermination(120)
    done = read_committed_offsets(str(checkpoint))
    assert done.batch_id == first.batch_id + 1
    assert done.in_flight == ()
    assert done.topic_offsets() == {topic: {0: 12, 1: 12, 2: 12}}
    rows = spark.read.parquet(str(tmp_path / "out")).select("partition", "offset").collect()
    assert len(rows) == 36
    assert len({(r.partition, r.offset) for r in rows}) == 36


def test_reader_on_a_stopped_continuous_query(spark: Any, emulator: Emulator, tmp_path: Path) -> None:
    topic = f"ckpt-{uuid.uuid4().hex[:8]}"
    emulator.create_topic(topic, 2)
    emulator.produce(topic, [f"c{i}".encode() for i in range(8)], 2)
    checkpoint = tmp_path / "checkpoint"
    query = (
        spark.readStream.format("testkafka")
        .option("bootstrap", emulator.bootstrap)
        .option("topic", topic)
        .load()
        .writeStream.format("parquet")
        .option("path", str(tmp_path / "out"))
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        wait_until(
            lambda: read_committed_offsets(str(checkpoint)).topic_offsets() == {topic: {0: 4, 1: 4}},
            message="first batch committed",
        )
        emulator.produce(topic, [f"d{i}".encode() for i in range(4)], 2)
        wait_until(
            lambda: read_committed_offsets(str(checkpoint)).topic_offsets() == {topic: {0: 6, 1: 6}},
            message="second batch committed",
        )
    finally:
        query.stop()
    stopped = read_committed_offsets(str(checkpoint))
    assert stopped.topic_offsets() == {topic: {0: 6, 1: 6}}
    assert stopped.in_flight == ()
