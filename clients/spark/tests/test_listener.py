"""The progress listener: parsing, and a sender that never blocks the caller, keeps its queue bounded,
retries 5xx and unreachable servers with backoff, gives up on refusals, lets a newer report supersede an
older one, and authenticates with client credentials (a token fetched once, fetched again when it
expires or the service answers 401). Queries on Spark's own Kafka source are in the repository's
tests/real_kafka/test_spark_queries.py."""

from __future__ import annotations

import base64
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from kafka_purge_spark import (
    ClientCredentials,
    ProgressReport,
    ProgressSender,
    report_from_progress,
)

SECRET = "etl-secret"


def test_end_offsets_are_parsed_from_json_strings_and_merged() -> None:
    progress = {
        "id": "q",
        "runId": "r",
        "batchId": 7,
        "sources": [
            {"endOffset": '{"t": {"0": 200, "1": 150}}'},
            {"endOffset": {"t": {"0": 120}, "u": {"0": 3}}},
            {"endOffset": "42"},
            {"endOffset": '{"logOffset": 3}'},
            {"endOffset": "not json"},
            {"endOffset": None},
        ],
    }
    report = report_from_progress(progress)
    assert report == ProgressReport("q", "r", 7, {"t": {0: 120, 1: 150}, "u": {0: 3}})
    assert report.body()["offsets"] == {"t": {"0": 120, "1": 150}, "u": {"0": 3}}
    assert (
        report_from_progress({"id": "q", "runId": "r", "batchId": 1, "sources": [{"endOffset": "7"}]}) is None
    )


class Service(BaseHTTPRequestHandler):
    """The progress endpoint (answers ``statuses`` in turn, then 200) and a client-credentials token
    endpoint at ``/token`` issuing ``tok-1``, ``tok-2``, ... valid for ``ttl`` seconds."""

    statuses: list[int] = []
    bodies: list[dict[str, Any]] = []
    grants: list[str] = []
    ttl = 3600

    def do_PUT(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        status = self.statuses.pop(0) if self.statuses else 200
        self.bodies.append(
            {"status": status, "auth": self.headers.get("Authorization"), "path": self.path, **body}
        )
        self._answer(status, {})

    def do_POST(self) -> None:
        form = self.rfile.read(int(self.headers["Content-Length"])).decode()
        basic = base64.b64encode(f"etl:{SECRET}".encode()).decode()
        if self.path != "/token" or form != "grant_type=client_credentials":
            self._answer(400, {"error": "invalid_request"})
        elif self.headers.get("Authorization") != f"Basic {basic}":
            self._answer(401, {"error": "invalid_client"})
        else:
            self.grants.append(token := f"tok-{len(self.grants) + 1}")
            self._answer(200, {"access_token": token, "token_type": "Bearer", "expires_in": self.ttl})

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def server() -> Iterator[str]:
    Service.statuses, Service.bodies, Service.grants, Service.ttl = [], [], [], 3600
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Service)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def report(batch: int, offset: int) -> ProgressReport:
    return ProgressReport("q", "r", batch, {"t": {0: offset}})


def delivered() -> list[dict[str, Any]]:
    return [b for b in Service.bodies if b["status"] == 200]


def test_retries_server_errors_then_delivers(server: str) -> None:
    Service.statuses = [503, 500]
    sender = ProgressSender(server, "etl job", cluster="main", token="tok", backoff_initial_s=0.01)
    sender.submit(report(1, 10))
    assert sender.flush(10)
    sender.close()
    assert delivered() == [
        {
            "status": 200,
            "auth": "Bearer tok",
            "path": "/v1/clusters/main/consumers/etl%20job/progress",
            "query_id": "q",
            "run_id": "r",
            "batch_id": 1,
            "offsets": {"t": {"0": 10}},
        }
    ]
    assert len(Service.bodies) == 3
    assert sender.sent == 1


def test_a_refused_report_is_not_retried(server: str) -> None:
    Service.statuses = [422]
    sender = ProgressSender(server, "c", cluster="main", backoff_initial_s=0.01)
    sender.submit(report(1, 10))
    sender.submit(report(2, 20))
    assert sender.flush(10)
    sender.close()
    assert [b["batch_id"] for b in Service.bodies] == [1, 2]
    assert [b["batch_id"] for b in delivered()] == [2]
    assert delivered()[0]["auth"] is None


def test_client_credentials_token_is_reused_then_renewed_after_a_401(server: str) -> None:
    credentials = ClientCredentials(f"{server}/token", "etl", SECRET)
    sender = ProgressSender(server, "c", cluster="main", credentials=credentials, backoff_initial_s=0.01)
    for batch in (1, 2):
        sender.submit(report(batch, batch))
        assert sender.flush(10)
    Service.statuses = [401]  # e.g. the service rotated its signing keys
    sender.submit(report(3, 3))
    assert sender.flush(10)
    sender.close()
    assert Service.grants == ["tok-1", "tok-2"]
    assert [(b["batch_id"], b["status"], b["auth"]) for b in Service.bodies] == [
        (1, 200, "Bearer tok-1"),
        (2, 200, "Bearer tok-1"),
        (3, 401, "Bearer tok-1"),
        (3, 200, "Bearer tok-2"),
    ]


def test_a_token_about_to_expire_is_replaced_before_use(server: str) -> None:
    Service.ttl = 31  # within the 30 s leeway after one second
    credentials = ClientCredentials(f"{server}/token", "etl", SECRET)
    sender = ProgressSender(server, "c", cluster="main", credentials=credentials)
    sender.submit(report(1, 1))
    assert sender.flush(10)
    sender.submit(report(2, 2))
    assert sender.flush(10)
    time.sleep(1.1)
    sender.submit(report(3, 3))
    assert sender.flush(10)
    sender.close()
    assert [b["auth"] for b in delivered()] == ["Bearer tok-1", "Bearer tok-1", "Bearer tok-2"]


def test_wrong_client_secret_is_retried_and_never_reaches_the_service(server: str) -> None:
    credentials = ClientCredentials(f"{server}/token", "etl", "wrong")
    sender = ProgressSender(server, "c", cluster="main", credentials=credentials, backoff_initial_s=0.01)
    sender.submit(report(1, 1))
    assert not sender.flush(0.5)
    sender.close(timeout_s=1)
    assert (sender.sent, Service.bodies, Service.grants) == (0, [], [])


def test_a_stalled_service_never_blocks_and_the_queue_stays_bounded(caplog: pytest.LogCaptureFixture) -> None:
    # A service that takes connections and never answers: the sender thread waits in its first request,
    # for up to its 30 s timeout. Submitting must not wait for it: 2000 submits end well within that.
    stalled = socket.create_server(("127.0.0.1", 0), backlog=8)
    sender = ProgressSender(
        f"http://127.0.0.1:{stalled.getsockname()[1]}",
        "c",
        cluster="main",
        token="t",
        max_queue=10,
        timeout_s=30,
    )
    try:
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="kafka_purge_spark.sender"):
            for batch in range(2000):
                sender.submit(report(batch, batch))
        assert time.monotonic() - started < 15.0
        assert (sender.submitted, sender.queued) == (2000, 10)
        # Everything but the queue and the report (at most two) the thread took made room.
        assert sender.dropped >= 2000 - 10 - 2
        # One warning for the stall, not one per dropped report.
        assert [r.getMessage() for r in caplog.records if "queue full" in r.getMessage()] == [
            "progress queue full (10 reports): the service does not keep up; dropping the oldest reports, "
            "each superseded by a newer one"
        ]
        assert not sender.flush(0.2)
        sender.close(timeout_s=0.2)
        assert sender.sent == 0
    finally:
        stalled.close()
