"""A very small HTTP/1.1 JSON server on asyncio streams (keep-alive, Content-Length bodies only).

The control API needs a handful of routes on loopback; this keeps the emulator free of a web framework.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl

log = logging.getLogger("kafka_emulator")

MAX_BODY_BYTES = 1024 * 1024
MAX_HEADER_LINES = 100


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class HttpRequest:
    method: str
    path: str
    body: bytes
    query: dict[str, str] = field(default_factory=dict)  # the last value of a repeated parameter

    def json(self) -> dict[str, Any]:
        if not self.body:
            return {}
        try:
            value = json.loads(self.body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise HttpError(400, f"invalid JSON body: {exc}") from None
        if not isinstance(value, dict):
            raise HttpError(400, "the JSON body must be an object")
        return value


App = Callable[[HttpRequest], Awaitable[tuple[int, Any]]]


class JsonHttpServer:
    def __init__(self, app: App, host: str = "127.0.0.1") -> None:
        self._app = app
        self.host = host
        self.port = 0
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self, port: int = 0) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while await self._one_exchange(reader, writer):
                pass
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            self._connections.discard(task)
            writer.transport.abort()

    async def _one_exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        request_line = await reader.readline()
        if not request_line:
            return False
        try:
            request, keep_alive = await _read_request(request_line, reader)
            status, payload = await self._app(request)
        except HttpError as exc:
            status, payload, keep_alive = exc.status, {"error": exc.message}, False
        except Exception:
            log.exception("control API request failed")
            status, payload, keep_alive = 500, {"error": "internal error"}, False
        body = json.dumps(payload).encode()
        reason = HTTPStatus(status).phrase
        head = (
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n"
        )
        writer.write(head.encode() + body)
        await writer.drain()
        if not keep_alive:
            with contextlib.suppress(ConnectionError):
                writer.close()
        return keep_alive


async def _read_request(request_line: bytes, reader: asyncio.StreamReader) -> tuple[HttpRequest, bool]:
    parts = request_line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise HttpError(400, "malformed request line")
    method, target, protocol = parts
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADER_LINES):
        line = (await reader.readline()).decode("latin-1").strip()
        if not line:
            break
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    else:
        raise HttpError(400, "too many headers")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise HttpError(411, "chunked bodies are not supported; send Content-Length")
    length = int(headers.get("content-length", "0") or "0")
    if length < 0 or length > MAX_BODY_BYTES:
        raise HttpError(413, "body too large")
    body = await reader.readexactly(length) if length else b""
    connection = headers.get("connection", "").lower()
    keep_alive = connection != "close" and (protocol == "HTTP/1.1" or connection == "keep-alive")
    path, _, query = target.partition("?")
    return HttpRequest(method.upper(), path, body, dict(parse_qsl(query))), keep_alive
