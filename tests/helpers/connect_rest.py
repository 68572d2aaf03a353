"""A small Kafka Connect REST server for tests: serves the documented read endpoints from a JSON
description, as a real HTTP server on a loopback port, for what a real worker
(``helpers.connect_worker``) cannot be made to do on demand: be older than Connect 2.3, take a bearer
token, answer slowly, report a FAILED connector.

The description maps connector names to ``{"type": "sink", "config": {...}, "state": "RUNNING",
"tasks": ["RUNNING", ...]}``; tests change it between sweeps (``connectors[name]["state"] = "PAUSED"``).
Endpoints, as Connect answers them:

- ``GET /connectors`` (names), with ``?expand=info&expand=status`` (KIP-465) a map of both per connector,
  unless ``expand`` is off (a worker before Connect 2.3, which ignores it);
- ``GET /connectors/{name}``, ``/config``, ``/status``, ``/topics`` (KIP-558); 404 for an unknown name.

``authorization`` set: every request without that exact ``Authorization`` header gets 401.
``delay_seconds`` holds every answer back (a slow Connect cluster). ``stop()`` takes the server down.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


class ConnectRestServer:
    def __init__(self, connectors: dict[str, dict[str, Any]], *, authorization: str | None = None) -> None:
        self.connectors = connectors
        self.authorization = authorization
        self.expand = True
        self.delay_seconds = 0.0
        self.requests: list[str] = []
        self._stopped = False
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="connect-rest", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def info(self, name: str) -> dict[str, Any]:
        spec = self.connectors[name]
        tasks = [{"connector": name, "task": i} for i in range(len(spec.get("tasks", [])))]
        return {"name": name, "config": spec.get("config", {}), "tasks": tasks, "type": spec["type"]}

    def status(self, name: str) -> dict[str, Any]:
        spec = self.connectors[name]
        worker = "127.0.0.1:8083"
        return {
            "name": name,
            "connector": {"state": spec.get("state", "RUNNING"), "worker_id": worker},
            "tasks": [
                {"id": i, "state": s, "worker_id": worker} for i, s in enumerate(spec.get("tasks", []))
            ],
            "type": spec["type"],
        }

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if parts == ["connectors"]:
            expand = set(query.get("expand", [])) if self.expand else set()
            if not expand:
                return 200, sorted(self.connectors)
            return 200, {name: self._expanded(name, expand) for name in sorted(self.connectors)}
        if len(parts) in (2, 3) and parts[0] == "connectors":
            name = parts[1]
            if name not in self.connectors:
                return 404, {"error_code": 404, "message": f"Connector {name} not found"}
            if len(parts) == 2:
                return 200, self.info(name)
            if parts[2] == "config":
                return 200, self.connectors[name].get("config", {})
            if parts[2] == "status":
                return 200, self.status(name)
            if parts[2] == "topics":
                return 200, {name: {"topics": self.connectors[name].get("active_topics", [])}}
        return 404, {"error_code": 404, "message": "Not found"}

    def _expanded(self, name: str, expand: set[str]) -> dict[str, Any]:
        entry: dict[str, Any] = {}
        if "info" in expand:
            entry["info"] = self.info(name)
        if "status" in expand:
            entry["status"] = self.status(name)
        return entry

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                if server.delay_seconds:
                    time.sleep(server.delay_seconds)
                if (
                    server.authorization is not None
                    and self.headers.get("Authorization") != server.authorization
                ):
                    self._send(401, {"error_code": 401, "message": "Unauthorized"})
                    return
                split = urlsplit(self.path)
                self._send(*server.answer(split.path, parse_qs(split.query)))

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler


def sink(topics: str | None = None, *, regex: str | None = None, **config: str) -> dict[str, Any]:
    """A running sink connector's description with one running task."""
    settings = {"connector.class": "io.confluent.connect.s3.S3SinkConnector", **config}
    if topics is not None:
        settings["topics"] = topics
    if regex is not None:
        settings["topics.regex"] = regex
    return {"type": "sink", "config": settings, "state": "RUNNING", "tasks": ["RUNNING"]}
