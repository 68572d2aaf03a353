"""A test-only Kafka source for Spark (Python Data Source API), because the official spark-sql-kafka
connector cannot be installed here. Never product code.

``spark.readStream.format("testkafka").option("bootstrap", ...).option("topic", ...)``: a streaming reader
with offsets shaped exactly like Spark's Kafka source (``{"topic": {"0": 100}}``: the next offset to read
per partition), one Spark partition per Kafka partition with new data, read with kafka-python inside the
Spark task. Like Spark's source with ``failOnDataLoss=true`` (the default), a batch whose start offset is
below the partition's log start offset fails with ``KAFKA_DATA_LOSS``; records are never silently skipped.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

SCHEMA = "topic string, partition int, offset long, timestamp long, key binary, value binary"
READ_DEADLINE_S = 60.0


class KafkaDataLoss(RuntimeError):
    """Spark's KAFKA_DATA_LOSS: offsets the query still needs are gone from Kafka."""


def _consumer(bootstrap: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka import KafkaConsumer

        return KafkaConsumer(
            bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False, auto_offset_reset="none"
        )


class KafkaRange(InputPartition):  # type: ignore[misc]
    def __init__(self, bootstrap: str, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.bootstrap, self.topic, self.partition, self.start, self.end = (
            bootstrap,
            topic,
            partition,
            start,
            end,
        )


def data_loss(topic: str, partition: int, start: int, log_start: int) -> KafkaDataLoss:
    return KafkaDataLoss(
        f"[KAFKA_DATA_LOSS] Some data may have been lost because they are not available in Kafka any more: "
        f"{topic}-{partition} needs offset {start} but the log start offset is {log_start}"
    )


class KafkaStreamReader(DataSourceStreamReader):  # type: ignore[misc]
    def __init__(self, options: dict[str, str]) -> None:
        self.bootstrap = options["bootstrap"]
        self.topic = options["topic"]
        self._admin: Any = None

    def _offsets(self) -> tuple[dict[int, int], dict[int, int]]:
        """(log start offsets, high watermarks) of every partition of the topic."""
        from kafka import TopicPartition

        if self._admin is None:
            self._admin = _consumer(self.bootstrap)
        self._admin.topics()  # refreshes metadata, so new partitions are seen
        partitions = sorted(self._admin.partitions_for_topic(self.topic) or [])
        tps = [TopicPartition(self.topic, p) for p in partitions]
        earliest = self._admin.beginning_offsets(tps)
        latest = self._admin.end_offsets(tps)
        return (
            {tp.partition: o for tp, o in earliest.items()},
            {tp.partition: o for tp, o in latest.items()},
        )

    def initialOffset(self) -> dict[str, Any]:
        earliest, _ = self._offsets()
        return {self.topic: {str(p): o for p, o in earliest.items()}}

    def latestOffset(self, start: dict[str, Any], limit: Any) -> dict[str, Any]:
        _, latest = self._offsets()
        return {self.topic: {str(p): o for p, o in latest.items()}}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[KafkaRange]:
        earliest, _ = self._offsets()
        ranges = []
        for key, stop in sorted(end[self.topic].items(), key=lambda kv: int(kv[0])):
            partition = int(key)
            begin = int(start.get(self.topic, {}).get(key, earliest.get(partition, 0)))
            if begin >= stop:
                continue
            if begin < earliest.get(partition, 0):
                raise data_loss(self.topic, partition, begin, earliest[partition])
            ranges.append(KafkaRange(self.bootstrap, self.topic, partition, begin, int(stop)))
        return ranges

    def read(self, partition: KafkaRange) -> Iterator[tuple[Any, ...]]:
        yield from read_range(partition)

    def commit(self, end: dict[str, Any]) -> None:
        return None

    def stop(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None


def read_range(r: KafkaRange) -> Iterator[tuple[Any, ...]]:
    """Every record of ``[start, end)`` of one partition, in order, or KafkaDataLoss."""
    from kafka import TopicPartition
    from kafka.errors import OffsetOutOfRangeError

    consumer = _consumer(r.bootstrap)
    tp = TopicPartition(r.topic, r.partition)
    try:
        log_start = consumer.beginning_offsets([tp])[tp]
        if r.start < log_start:
            raise data_loss(r.topic, r.partition, r.start, log_start)
        consumer.assign([tp])
        consumer.seek(tp, r.start)
        expected = r.start
        deadline = time.monotonic() + READ_DEADLINE_S
        while expected < r.end:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{r.topic}-{r.partition}: no record at {expected} within {READ_DEADLINE_S} s"
                )
            try:
                batches = consumer.poll(timeout_ms=500)
            except OffsetOutOfRangeError as exc:
                raise data_loss(r.topic, r.partition, expected, -1) from exc
            for record in batches.get(tp, []):
                if record.offset >= r.end:
                    break
                if record.offset != expected:
                    raise data_loss(r.topic, r.partition, expected, record.offset)
                expected += 1
                yield (r.topic, r.partition, record.offset, record.timestamp, record.key, record.value)
    finally:
        consumer.close()


class KafkaSource(DataSource):  # type: ignore[misc]
    @classmethod
    def name(cls) -> str:
        return "testkafka"

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: StructType) -> KafkaStreamReader:
        return KafkaStreamReader(dict(self.options))
