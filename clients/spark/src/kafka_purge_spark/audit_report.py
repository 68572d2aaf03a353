"""Compliance report over kafka-purge's audit trail, as a PySpark batch job.

    kafka-purge-audit-report --input export.ndjson --output report/ [--master local[*]]
    kafka-purge-audit-report --sqlite data/kafka-purge.db --output report/
    python -m kafka_purge_spark.audit_report --input export/ --output report/ --master spark://host:7077 \
        --conf spark.sql.shuffle.partitions=8

The input is ``GET /v1/audit/export`` (NDJSON, files or a folder), or the service's SQLite database. Per
cluster, topic, principal (the requester) and UTC day of the request the report has:

- ``requests``: deletion requests touching the topic; ``partitions_requested``;
- ``partitions_succeeded`` / ``partitions_failed``: outcomes from each deletion's completion summary;
- ``records_deleted``: per partition, how far each succeeded cut moved past the highest earlier cut of
  that partition in the trail (the first cut counts from offset 0: the trail knows nothing older);
- ``avg_seconds_to_replicated`` / ``max_seconds_to_replicated``: request to completion of deletions whose
  partitions on the topic succeeded (success means the low watermark reached the offset on every replica,
  or the leader's log start offset with ``leader_only``);
- ``denials``: ``authz.denied`` events naming the topic, by the denied principal on the day of the denial.

Writes ``report.parquet`` and a human-readable ``summary.md`` and ``summary.html`` into the output folder.
"""

from __future__ import annotations

import argparse
import html
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F  # noqa: N812 - PySpark's own convention

APP_NAME = "kafka-purge audit report"  # the application name Spark masters and UIs list

KEYS = ["cluster", "topic", "principal", "day"]
METRICS = [
    "requests",
    "partitions_requested",
    "partitions_succeeded",
    "partitions_failed",
    "records_deleted",
    "avg_seconds_to_replicated",
    "max_seconds_to_replicated",
    "denials",
]
ENVELOPE = (
    "id long, occurred_at string, principal string, client_host string, request_id string, action string, "
    "cluster string, deletion_id string, details string"
)
# A request and a completion summary list their partitions column by column; requests written before
# 2026-11-23 and summaries written before 2026-11-22 list one object per partition. Each event parses
# under exactly one of the two schemas (the other gives null).
REQUESTED = "partitions struct<topic: array<string>>"
REQUESTED_OBJECTS = "partitions array<struct<topic: string, partition: int, resolved_offset: long>>"
COMPLETED = (
    "partitions struct<topic: array<string>, partition: array<int>, resolved_offset: array<long>, "
    "status: array<string>>"
)
COMPLETED_OBJECTS = (
    "partitions array<struct<topic: string, partition: int, resolved_offset: long, status: string>>"
)
OUTCOME_FIELDS = ("topic", "partition", "resolved_offset", "status")
DENIED = "topics array<string>"
SUMMARY_ROWS = 200
ACTIONS = ("deletion.requested", "deletion.completed", "authz.denied")


def read_export(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """Audit events from NDJSON; ``details`` stays JSON text and is parsed per action."""
    # With ``details`` declared a string, the JSON reader keeps that object's raw text.
    return spark.read.schema(ENVELOPE).json(list(paths)).where(F.col("action").isNotNull())


def read_sqlite(spark: SparkSession, path: str) -> DataFrame:
    """Audit events straight from the service's SQLite database (read-only)."""
    columns = "id, occurred_at, principal, client_host, request_id, action, cluster, deletion_id, details"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(f"SELECT {columns} FROM audit_event ORDER BY id").fetchall()  # noqa: S608
    # SQLite keeps naive UTC "YYYY-MM-DD HH:MM:SS.ffffff": the same instant as the export's RFC 3339 text.
    normalized = [(r[0], str(r[1]).replace(" ", "T") + "Z", *r[2:]) for r in rows]
    return spark.createDataFrame(normalized, ENVELOPE)


def _seconds(column: str) -> Column:
    return F.unix_micros(F.to_timestamp(F.col(column), "yyyy-MM-dd'T'HH:mm:ss[.SSSSSS]XXX")) / F.lit(1e6)


def _requests(events: DataFrame) -> DataFrame:
    """One row per (deletion, topic): who asked, when, how many partitions."""
    requested = events.where(F.col("action") == "deletion.requested").select(
        "deletion_id",
        "cluster",
        "principal",
        F.substring("occurred_at", 1, 10).alias("day"),
        _seconds("occurred_at").alias("requested_s"),
        F.explode(
            F.coalesce(
                F.from_json("details", REQUESTED)["partitions"]["topic"],
                F.from_json("details", REQUESTED_OBJECTS)["partitions"]["topic"],
            )
        ).alias("topic"),
    )
    return requested.groupBy("deletion_id", "cluster", "principal", "day", "requested_s", "topic").agg(
        F.count("*").alias("partitions_requested")
    )


def _outcomes(events: DataFrame, requests: DataFrame) -> DataFrame:
    """Every partition outcome of completed deletions, with the records its cut removed."""
    flat = _completed_partitions(events)
    owners = requests.select("deletion_id", "cluster", "principal", "day", "requested_s").distinct()
    joined = flat.join(owners, "deletion_id")
    history = (
        Window.partitionBy("cluster", "topic", "partition")
        .orderBy("event_id")
        .rowsBetween(Window.unboundedPreceding, -1)
    )
    succeeded = F.col("status") == "succeeded"
    earlier = F.max(F.when(succeeded, F.col("resolved_offset"))).over(history)
    deleted = F.greatest(F.col("resolved_offset") - F.coalesce(earlier, F.lit(0)), F.lit(0))
    return joined.withColumn("records", F.when(succeeded, deleted).otherwise(F.lit(0)))


def _completed_partitions(events: DataFrame) -> DataFrame:
    """One row per partition of each completion summary, whichever of its two shapes it has."""
    completed = events.where(F.col("action") == "deletion.completed").select(
        "deletion_id",
        F.col("id").alias("event_id"),
        _seconds("occurred_at").alias("completed_s"),
        "details",
    )
    columns = F.from_json("details", COMPLETED)["partitions"]
    zipped = F.arrays_zip(*(columns[field].alias(field) for field in OUTCOME_FIELDS))
    objects = F.from_json("details", COMPLETED_OBJECTS)["partitions"]
    shapes = [completed.select("*", F.explode(partitions).alias("p")) for partitions in (zipped, objects)]
    fields = [F.col(f"p.{field}").alias(field) for field in OUTCOME_FIELDS]
    return shapes[0].unionByName(shapes[1]).select("deletion_id", "event_id", "completed_s", *fields)


def _denials(events: DataFrame) -> DataFrame:
    denied = events.where(F.col("action") == "authz.denied").select(
        "cluster",
        "principal",
        F.substring("occurred_at", 1, 10).alias("day"),
        F.explode(F.from_json("details", DENIED)["topics"]).alias("topic"),
    )
    return denied.where(F.col("cluster").isNotNull()).groupBy(*KEYS).agg(F.count("*").alias("denials"))


def build_report(events: DataFrame) -> DataFrame:
    """The report table: one row per cluster, topic, principal and day, with every metric."""
    # Only three actions matter; parsed once and reused by every branch of the plan.
    events = events.where(F.col("action").isin(*ACTIONS)).cache()
    requests = _requests(events).cache()
    outcomes = _outcomes(events, requests)
    asked = requests.groupBy(*KEYS).agg(
        F.countDistinct("deletion_id").alias("requests"),
        F.sum("partitions_requested").alias("partitions_requested"),
    )
    per_topic = outcomes.groupBy("deletion_id", *KEYS).agg(
        F.sum(F.when(F.col("status") == "succeeded", 1).otherwise(0)).alias("succeeded"),
        F.sum(F.when(F.col("status") == "failed", 1).otherwise(0)).alias("failed"),
        F.sum("records").alias("records"),
        F.first(F.col("completed_s") - F.col("requested_s")).alias("seconds"),
    )
    done = per_topic.groupBy(*KEYS).agg(
        F.sum("succeeded").alias("partitions_succeeded"),
        F.sum("failed").alias("partitions_failed"),
        F.sum("records").alias("records_deleted"),
        F.avg(F.when(F.col("failed") == 0, F.col("seconds"))).alias("avg_seconds_to_replicated"),
        F.max(F.when(F.col("failed") == 0, F.col("seconds"))).alias("max_seconds_to_replicated"),
    )
    report = asked.join(done, KEYS, "left").join(_denials(events), KEYS, "full_outer")
    counts = [m for m in METRICS if not m.endswith("_to_replicated")]
    return (
        report.fillna(0, subset=counts)
        .select(
            *KEYS, *[F.col(m).cast("long") for m in counts[:-1]], *METRICS[5:7], F.col("denials").cast("long")
        )
        .orderBy(*KEYS)
    )


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def summaries(rows: Sequence[dict[str, Any]]) -> tuple[str, str]:
    """(Markdown, HTML) of the report: totals, then the first rows of the table."""
    totals = {m: sum(int(r[m] or 0) for r in rows) for m in METRICS if not m.endswith("_to_replicated")}
    header = [*KEYS, *METRICS]
    shown = rows[:SUMMARY_ROWS]
    md = ["# kafka-purge compliance report", "", "| total | value |", "| --- | --- |"]
    md += [f"| {name} | {value} |" for name, value in totals.items()]
    md += ["", f"Rows: {len(rows)} (first {len(shown)} below)", "", "| " + " | ".join(header) + " |"]
    md += ["|" + " --- |" * len(header)]
    md += ["| " + " | ".join(_cell(r[c]) for c in header) + " |" for r in shown]
    cells = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(r[c]))}</td>" for c in header) + "</tr>" for r in shown
    )
    total_rows = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in totals.items())
    page = (
        "<!doctype html><meta charset=utf-8><title>kafka-purge compliance report</title>"
        f"<h1>kafka-purge compliance report</h1><table>{total_rows}</table>"
        f"<p>Rows: {len(rows)} (first {len(shown)} below)</p><table><tr>"
        + "".join(f"<th>{c}</th>" for c in header)
        + f"</tr>{cells}</table>"
    )
    return "\n".join(md) + "\n", page


def write_report(report: DataFrame, output: str) -> list[dict[str, Any]]:
    """Parquet plus the two summaries; the report's rows (it is small: one per key)."""
    folder = Path(output)
    folder.mkdir(parents=True, exist_ok=True)
    # Computed once, for both the Parquet file and the summaries' rows, instead of once for each.
    report = report.cache()
    try:
        report.coalesce(1).write.mode("overwrite").parquet(str(folder / "report.parquet"))
        rows = [row.asDict() for row in report.collect()]
    finally:
        report.unpersist()
    markdown, page = summaries(rows)
    (folder / "summary.md").write_text(markdown, encoding="utf-8")
    (folder / "summary.html").write_text(page, encoding="utf-8")
    return rows


def run(
    spark: SparkSession, output: str, *, inputs: Sequence[str] = (), sqlite: str | None = None
) -> list[dict[str, Any]]:
    events = read_sqlite(spark, sqlite) if sqlite else read_export(spark, inputs)
    return write_report(build_report(events), output)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="kafka-purge-audit-report", description="kafka-purge compliance report (PySpark)"
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--input", nargs="+", help="audit export NDJSON files or folders")
    source.add_argument("--sqlite", help="the service's SQLite database file")
    parser.add_argument("--output", required=True, help="folder for report.parquet, summary.md, summary.html")
    parser.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        type=_setting,
        metavar="KEY=VALUE",
        help="a Spark setting, as spark-submit's --conf (repeatable), e.g. spark.sql.shuffle.partitions=8",
    )
    return parser.parse_args(argv)


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    builder = (
        SparkSession.builder.master(args.master)
        .appName(APP_NAME)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.showConsoleProgress", "false")
    )
    for key, value in args.conf:
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    try:
        rows = run(session, args.output, inputs=args.input or (), sqlite=args.sqlite)
    finally:
        session.stop()
    print(f"{len(rows)} report rows written to {args.output}")  # noqa: T201 - a command-line tool
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
