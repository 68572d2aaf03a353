"""A webhook receiver as a real process, for the webhook tests: it records every request it gets to a
file (one JSON object per line) and answers 204, or 500 while told to fail (``POST /_control/fail``
with ``{"count": N}``: the next N requests), after holding each answer back while told to
(``POST /_control/hold`` with ``{"seconds": S}``). Run as a script (``python webhook_receiver.py FILE``); it
prints ``{"url": ...}`` once listening. ``Receiver`` starts one and reads what it recorded."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path == "/_control/fail":
            with self.server.lock:
                self.server.failing = int(json.loads(body)["count"])
            self._answer(204)
            return
        if self.path == "/_control/hold":
            with self.server.lock:
                self.server.hold = float(json.loads(body)["seconds"])
            self._answer(204)
            return
        with self.server.lock:
            status = 500 if self.server.failing > 0 else 204
            self.server.failing = max(self.server.failing - 1, 0)
            record = {
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode(),
                "status": status,
                "received": time.time(),
            }
            with self.server.record.open("a") as out:
                out.write(json.dumps(record) + "\n")
            hold = self.server.hold
        time.sleep(hold)
        self._answer(status)

    def _answer(self, status: int) -> None:
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    def __init__(self, record: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.record = record
        self.failing = 0
        self.hold = 0.0
        self.lock = threading.Lock()


@dataclass
class Receiver:
    """A receiver process: its URL, and what it recorded."""

    popen: subprocess.Popen[str]
    url: str
    record: Path

    @classmethod
    def start(cls, record: Path) -> Receiver:
        record.touch()
        popen = subprocess.Popen([sys.executable, __file__, str(record)], stdout=subprocess.PIPE, text=True)
        assert popen.stdout is not None
        line = popen.stdout.readline()
        return cls(popen, json.loads(line)["url"], record)

    def fail_next(self, count: int) -> None:
        httpx.post(f"{self.url}/_control/fail", json={"count": count}, timeout=10).raise_for_status()

    def hold(self, seconds: float) -> None:
        httpx.post(f"{self.url}/_control/hold", json={"seconds": seconds}, timeout=10).raise_for_status()

    def requests(self) -> list[dict[str, Any]]:
        lines = self.record.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def wait_for(self, predicate: Any, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        """The recorded requests once ``predicate(requests)`` holds."""
        deadline = time.monotonic() + timeout_s
        while not predicate(found := self.requests()):
            assert time.monotonic() < deadline, found
            time.sleep(0.05)
        return found

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait(timeout=10)


def verified(request: dict[str, Any], secret: str, tolerance_s: float = 300.0) -> dict[str, Any]:
    """The CloudEvent a recorded request carried, after checking its signature as a receiver does
    (Standard Webhooks: HMAC-SHA256 over ``id.timestamp.body``, a timestamp within ``tolerance_s``)."""
    headers = request["headers"]
    message_id, timestamp = headers["webhook-id"], headers["webhook-timestamp"]
    assert abs(time.time() - int(timestamp)) <= tolerance_s, "timestamp too old: a replay"
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.{request['body']}".encode()
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    offered = [s.split(",", 1)[1] for s in headers["webhook-signature"].split() if s.startswith("v1,")]
    assert any(hmac.compare_digest(expected, s) for s in offered), "signature does not verify"
    event: dict[str, Any] = json.loads(request["body"])
    return event


if __name__ == "__main__":
    server = _Server(Path(sys.argv[1]))
    print(json.dumps({"url": f"http://127.0.0.1:{server.server_address[1]}"}), flush=True)
    server.serve_forever()


@contextmanager
def receiver_process(tmp_path: Path) -> Iterator[Receiver]:
    """A receiver recording to ``tmp_path``/received.jsonl while the block runs."""
    receiver = Receiver.start(tmp_path / "received.jsonl")
    try:
        yield receiver
    finally:
        receiver.stop()
