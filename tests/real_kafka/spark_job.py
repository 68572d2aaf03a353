"""A Spark job (a driver program) for tests/real_kafka/test_spark_queries.py, run as a child process on the
Python of one PySpark line (the main venv's PySpark 4.x, ``.venv-spark35``'s PySpark 3.5): it imports
pyspark and kafka_purge_spark only, as a user's job does. One SparkSession (local[2]) for its whole life.

Standard input, one JSON object a line; each answer is one line on standard output starting with ``@@ ``
(Spark's own logs go to standard error):

- first line ``{"jars": [...]}`` (Spark's Kafka connector files, as spark.jars) or
  ``{"packages": "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.7"}`` (the connector by its Maven
  coordinates, as ``spark.jars.packages``, the way clients/spark/README.md shows): answered
  ``{"pyspark": version}`` once the session runs;
- then ``{"run": {...}}``: one run of a query, ``readStream.format("kafka")`` over SASL_PLAINTEXT with
  SCRAM-SHA-512, into a parquet sink, until the data available at its start is read
  (``trigger(availableNow=True)``), from its checkpoint when one exists; with ``processing_time`` a
  continuous query instead (``trigger(processingTime=...)``), stopped once it has processed all that is
  available (``processAllAvailable``, then ``stop``); with ``service`` the
  ``PurgeProgressListener`` reports its progress there; with ``failing_sink`` its sink fails every
  batch. Answered with the run's batches, ids, sink rows, the listener's counts and warnings, or the
  query's error.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import pyspark
from pyspark.sql import SparkSession

from kafka_purge_spark import ClientCredentials, PurgeProgressListener


class Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def session(setup: dict[str, Any]) -> SparkSession:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("kafka-purge-spark-driver")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "768m")
    )
    if setup.get("packages"):
        builder = builder.config("spark.jars.packages", setup["packages"])
    else:
        builder = builder.config("spark.jars", ",".join(setup["jars"]))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def kafka_options(run: dict[str, Any]) -> dict[str, str]:
    jaas = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{run["user"]}" password="{run["password"]}";'
    )
    options = {
        "kafka.bootstrap.servers": run["bootstrap"],
        "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": jaas,
        "subscribe": run["topic"],
        "startingOffsets": "earliest",
    }
    if run.get("max_offsets"):
        options["maxOffsetsPerTrigger"] = str(run["max_offsets"])
    return options


def listener_for(run: dict[str, Any]) -> PurgeProgressListener | None:
    if not run.get("service"):
        return None
    credentials = ClientCredentials(f"{run['service']}/oauth/token", run["client"], run["secret"])
    return PurgeProgressListener(
        run["service"], run["consumer"], cluster=run["cluster"], credentials=credentials, timeout_s=5
    )


def delivered(listener: PurgeProgressListener, reports: int) -> None:
    """Spark's listener bus calls the listener after the query's last progress event; wait for that
    call, then for the sender to deliver (or give up)."""
    deadline = time.monotonic() + 60
    while listener.sender.submitted < reports and time.monotonic() < deadline:
        time.sleep(0.05)
    listener.sender.flush(60)


def parsed(offset: Any) -> Any:
    """A source's end offset: JSON text in PySpark 4's progress objects, parsed in PySpark 3.5's dicts."""
    return json.loads(offset) if isinstance(offset, str) else offset


def failing_sink(frame: Any, batch_id: int) -> None:
    """A sink that is down: the batch is planned (``offsets/<N>``) and never committed (``commits/<N>``)."""
    raise RuntimeError(f"the sink is down (batch {batch_id})")


def run_query(spark: SparkSession, run: dict[str, Any], warnings: Warnings) -> dict[str, Any]:
    warnings.messages.clear()
    listener = listener_for(run)
    if listener is not None:
        spark.streams.addListener(listener)
    stream = (
        spark.readStream.format("kafka").options(**kafka_options(run)).load().select("partition", "offset")
    )
    if run.get("failing_sink"):
        stream = stream.writeStream.foreachBatch(failing_sink)
    else:
        stream = stream.writeStream.format("parquet").option("path", run["sink"])
    stream = stream.option("checkpointLocation", run["checkpoint"])
    if run.get("processing_time"):
        query = stream.trigger(processingTime=run["processing_time"]).start()
    else:
        query = stream.trigger(availableNow=True).start()
    error = None
    try:
        if run.get("processing_time"):
            query.processAllAvailable()
            query.stop()
        else:
            query.awaitTermination(240)
    except Exception as exc:  # the answer carries the query's error to the test
        error = str(exc)[:2000]
    # A continuous query also reports idle triggers: the same batch id again, with no rows.
    ends = {p["batchId"]: parsed(p["sources"][0]["endOffset"]) for p in query.recentProgress}
    batches = list(ends.items())
    answer: dict[str, Any] = {"query_id": str(query.id), "run_id": str(query.runId), "batches": batches}
    if listener is not None:
        delivered(listener, len(batches))
        spark.streams.removeListener(listener)
        listener.sender.close(timeout_s=5)
        answer.update(submitted=listener.sender.submitted, sent=listener.sender.sent)
    rows = spark.read.parquet(run["sink"]) if Path(run["sink"]).exists() else None
    answer.update(
        error=error or (str(query.exception()) if query.exception() else None),
        rows=rows.count() if rows is not None else 0,
        distinct=rows.distinct().count() if rows is not None else 0,
        warnings=list(warnings.messages),
    )
    return answer


def reply(body: dict[str, Any]) -> None:
    sys.stdout.write("@@ " + json.dumps(body) + "\n")
    sys.stdout.flush()


def main() -> None:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    warnings = Warnings()
    logging.getLogger("kafka_purge_spark.listener").addHandler(warnings)
    spark = session(json.loads(sys.stdin.readline()))
    reply({"pyspark": pyspark.__version__})
    for line in sys.stdin:
        try:
            reply(run_query(spark, json.loads(line)["run"], warnings))
        except Exception as exc:  # the test reads what went wrong instead of waiting for an answer
            reply({"error": repr(exc)[:2000]})
    spark.stop()


if __name__ == "__main__":
    main()
