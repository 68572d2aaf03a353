"""The compliance report job on a generated audit export of 100,000 events: every figure matches a
plain-Python recount; Parquet, Markdown and HTML are written; the SQLite input reads the same events."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from audit_events import assert_report_matches, generate, recount

from kafka_purge_spark import audit_report

EVENTS = 100_000


def test_report_matches_a_python_recount(spark: Any, tmp_path: Path) -> None:
    export = tmp_path / "export.ndjson"
    events = generate(export, EVENTS)
    assert sum(1 for _ in export.open(encoding="utf-8")) == EVENTS
    rows = audit_report.run(spark, str(tmp_path / "report"), inputs=[str(export)])

    assert_report_matches(rows, events, audit_report.METRICS)
    assert sum(r["records_deleted"] for r in rows) > 0
    assert sum(r["denials"] for r in rows) > 0

    table = pq.read_table(tmp_path / "report" / "report.parquet")
    assert table.num_rows == len(rows)
    assert table.column_names == [*audit_report.KEYS, *audit_report.METRICS]
    summary = (tmp_path / "report" / "summary.md").read_text(encoding="utf-8")
    assert f"| requests | {sum(r['requests'] for r in rows)} |" in summary
    assert "<h1>kafka-purge compliance report</h1>" in (tmp_path / "report" / "summary.html").read_text()


def test_report_from_the_service_database(spark: Any, tmp_path: Path) -> None:
    export = tmp_path / "export.ndjson"
    events = generate(export, 300, seed=11)
    database = tmp_path / "purge.db"
    with sqlite3.connect(database) as db:
        db.execute(
            "CREATE TABLE audit_event (id INTEGER PRIMARY KEY, occurred_at DATETIME, principal TEXT, "
            "client_host TEXT, request_id TEXT, action TEXT, cluster TEXT, deletion_id TEXT, details JSON, "
            "prev_hash TEXT, hash TEXT)"
        )
        db.executemany(
            "INSERT INTO audit_event VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '', '')",
            [
                (
                    e["id"],
                    e["occurred_at"].strftime("%Y-%m-%d %H:%M:%S.%f"),
                    e["principal"],
                    e["client_host"],
                    e["request_id"],
                    e["action"],
                    e["cluster"],
                    e["deletion_id"],
                    json.dumps(e["details"]),
                )
                for e in events
            ],
        )
    from_db = audit_report.run(spark, str(tmp_path / "report"), sqlite=str(database))
    expected = recount(events)
    assert {(r["cluster"], r["topic"], r["principal"], r["day"]): r["records_deleted"] for r in from_db} == {
        key: figures.get("records_deleted", 0) for key, figures in expected.items()
    }
    assert sum(r["requests"] for r in from_db) == sum(f.get("requests", 0) for f in expected.values())
    assert sum(r["denials"] for r in from_db) == sum(f.get("denials", 0) for f in expected.values())
