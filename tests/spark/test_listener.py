"""The progress listener's parsing and its sender: never blocks the caller, bounded queue, retries with
backoff on 5xx and unreachable servers, gives up on refusals, and a newer report supersedes an older one."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_until

from app.integrations.spark.listener import (
    ProgressReport,
    ProgressSender,
    PurgeProgressListener,
    report_from_progress,
)


def test_end_offsets_are_parsed_from_json_strings_and_merged() -> None:
    progress = {
        "id": "q",
        "runId": "r",
        "batchId": 7,
        "sources": [
            {"endOffset": '{"t": {"0": 200, "1": 150}}'},
            {"endOffset": {"t": {"0": 120}, "u": {"0": 3}}},
            {"endOffset": "42"},
            {"endOffset": None},
        ],
    }
    report = report_from_progress(progress)
    assert report == ProgressReport("q", "r", 7, {"t": {0: 120, 1: 150}, "u": {0: 3}})
    assert report.body()["offsets"] == {"t": {"0": 120, "1": 150}, "u": {"0": 3}}
    assert (
        report_from_progress({"id": "q", "runId": "r", "batchId": 1, "sources": [{"endOffset": "7"}]}) is None
    )


class Recorder(BaseHTTPRequestHandler):
    statuses: list[int] = []
    bodies: list[dict[str, Any]] = []

    def do_PUT(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        status = self.statuses.pop(0) if self.statuses else 200
        if status == 200:
            self.bodies.append({"auth": self.headers.get("Authorization"), "path": self.path, **body})
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def server() -> Iterator[str]:
    Recorder.statuses, Recorder.bodies = [], []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def report(batch: int, offset: int) -> ProgressReport:
    return ProgressReport("q", "r", batch, {"t": {0: offset}})


def test_retries_server_errors_then_delivers(server: str) -> None:
    Recorder.statuses = [503, 500]
    sender = ProgressSender(server, lambda: "tok", "etl job", cluster="main", backoff_initial_s=0.01)
    sender.submit(report(1, 10))
    assert sender.flush(10)
    sender.close()
    assert Recorder.bodies == [
        {
            "auth": "Bearer tok",
            "path": "/v1/clusters/main/consumers/etl%20job/progress",
            "query_id": "q",
            "run_id": "r",
            "batch_id": 1,
            "offsets": {"t": {"0": 10}},
        }
    ]
    assert sender.sent == 1


def test_a_refused_report_is_not_retried(server: str) -> None:
    Recorder.statuses = [422]
    sender = ProgressSender(server, lambda: None, "c", cluster="main", backoff_initial_s=0.01)
    sender.submit(report(1, 10))
    sender.submit(report(2, 20))
    assert sender.flush(10)
    sender.close()
    assert [b["batch_id"] for b in Recorder.bodies] == [2]
    assert Recorder.bodies[0]["auth"] is None


def test_service_down_never_blocks_and_the_queue_stays_bounded() -> None:
    sender = ProgressSender(
        "http://127.0.0.1:9",
        lambda: "t",
        "c",
        cluster="main",
        max_queue=10,
        backoff_initial_s=0.05,
        timeout_s=0.5,
    )
    started = time.monotonic()
    for batch in range(2000):
        sender.submit(report(batch, batch))
    assert time.monotonic() - started < 1.0
    assert sender.queued <= 10
    # The sender thread takes a few reports off the queue while they arrive; the rest made room.
    assert sender.dropped >= 1900
    assert not sender.flush(0.2)
    sender.close(timeout_s=1)
    assert sender.sent == 0


def test_a_query_runs_on_while_the_service_is_down(spark: Any, emulator: Any, tmp_path: Path) -> None:
    topic = f"down-{uuid.uuid4().hex[:8]}"
    emulator.create_topic(topic, 2)
    emulator.produce(topic, [b"x%d" % i for i in range(20)], 2)
    listener = PurgeProgressListener(
        "http://127.0.0.1:9", lambda: "t", "job", cluster="main", backoff_initial_s=0.05, timeout_s=0.5
    )
    spark.streams.addListener(listener)
    try:
        query = (
            spark.readStream.format("testkafka")
            .option("bootstrap", emulator.bootstrap)
            .option("topic", topic)
            .load()
            .writeStream.format("parquet")
            .option("path", str(tmp_path / "out"))
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        assert query.awaitTermination(120)
        assert query.exception() is None
        wait_until(lambda: listener.sender.submitted >= 1, message="a progress report")
    finally:
        spark.streams.removeListener(listener)
        listener.sender.close(timeout_s=1)
    assert listener.sender.sent == 0
    assert spark.read.parquet(str(tmp_path / "out")).count() == 20
