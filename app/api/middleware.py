"""Pure ASGI middleware: request ids, the body-size guard, control characters in the path and query,
and request metrics.

The body-size guard answers 413 before the app parses anything: when Content-Length is over the limit,
and for bodies without a Content-Length (chunked) as soon as the bytes read exceed it (such bodies are
buffered, at most the limit, and replayed to the app).

A refusal made here reads and discards the rest of the body first, up to ``DRAIN_BYTES``, as nginx's
lingering close does: clients (curl, requests, httpx) send the whole body before they read the answer,
urllib3 in a write after the head's, and a connection closed with bytes still on their way is reset,
which loses the answer on its way. A body read to its end leaves the connection open for the next
request; a longer one is not waited for and the connection closes, as it does for one sent with
``Expect: 100-continue`` (its client waits for the answer before sending it) and for a request whose
Content-Length cannot be read (where its body ends is unknown).
"""

from __future__ import annotations

import json
import re
import time
import uuid
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl

from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.problems import PROBLEM_MEDIA_TYPE, problem_body, request_id_of
from app.logs import log_context
from app.metrics import http_request_duration_seconds, http_requests_total
from app.text import CONTROL_CHARACTER_DETAIL, has_control_character

REQUEST_ID_HEADER = b"x-request-id"
DRAIN_BYTES = 16 * 1024 * 1024
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:\-]{1,64}")


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


class RequestIdMiddleware:
    """Takes a sane ``X-Request-ID`` from the caller or makes one; stores it and echoes it back."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        offered = (_header(scope, REQUEST_ID_HEADER) or b"").decode("latin-1")
        request_id = offered if _SANE_REQUEST_ID.fullmatch(offered) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0].lower() != REQUEST_ID_HEADER]
                headers.append((REQUEST_ID_HEADER, request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        with log_context(request_id=request_id, principal=None):
            await self.app(scope, receive, send_with_id)


async def send_problem(
    scope: Scope,
    send: Send,
    status: int,
    slug: str,
    title: str,
    detail: str,
    errors: list[dict[str, str]] | None = None,
    *,
    close: bool,
) -> None:
    body = problem_body(
        status=status,
        slug=slug,
        title=title,
        detail=detail,
        instance=scope.get("path"),
        request_id=request_id_of(scope),
    )
    if errors is not None:
        body["errors"] = errors
    payload = json.dumps(body).encode()
    headers = [
        (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
        (b"content-length", str(len(payload)).encode()),
    ]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


class BodySizeLimitMiddleware:
    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared is not None:
            if not declared.isdigit():
                await send_problem(
                    scope,
                    send,
                    400,
                    "malformed-request",
                    "Malformed request",
                    "Bad Content-Length",
                    close=True,
                )
            elif int(declared) > self.max_body_bytes:
                drained = int(declared) <= DRAIN_BYTES and await _drained(scope, receive, 0)
                await self._too_large(scope, send, close=not drained)
            else:
                await self.app(scope, receive, send)
            return
        if _header(scope, b"transfer-encoding") is None:
            await self.app(scope, receive, send)
            return
        buffered = await self._read_limited(receive)
        if buffered is None:
            drained = await _drained(scope, receive, self.max_body_bytes)
            await self._too_large(scope, send, close=not drained)
            return
        await self.app(scope, _replay(buffered, receive), send)

    async def _read_limited(self, receive: Receive) -> list[Message] | None:
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages
            size += len(message.get("body", b""))
            if size > self.max_body_bytes:
                return None
            if not message.get("more_body", False):
                return messages

    async def _too_large(self, scope: Scope, send: Send, *, close: bool) -> None:
        detail = f"The request body is larger than {self.max_body_bytes} bytes."
        await send_problem(
            scope, send, 413, "payload-too-large", "Request body too large", detail, close=close
        )


async def _drained(scope: Scope, receive: Receive, read: int) -> bool:
    """Whether the rest of a refused body (``read`` bytes of it read already) was read and discarded
    to its end: never for a request that expects ``100 Continue``, nor past ``DRAIN_BYTES`` in all."""
    if _header(scope, b"expect") is not None:
        return False
    while read <= DRAIN_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            return False
        read += len(message.get("body", b""))
        if not message.get("more_body", False):
            return True
    return False


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


class ControlCharacterMiddleware:
    """Answers 422 to a request whose path or query (percent-decoded, as routing and parameters see them)
    holds a control character (``app.text``), before any route reads a parameter."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = _refused_parameter(scope)
        if refused is None:
            await self.app(scope, receive, send)
            return
        name, where = refused
        error = {"parameter": name, "in": where, "detail": CONTROL_CHARACTER_DETAIL}
        detail = "The request has invalid fields; see errors."
        drained = await _drained(scope, receive, 0)
        await send_problem(
            scope,
            send,
            422,
            "validation-failed",
            "Request is not valid",
            detail,
            [error],
            close=not drained,
        )


def _refused_parameter(scope: Scope) -> tuple[str, str] | None:
    """(name, "path" or "query") of the first place a control character is, or None. The problem names
    the parameter, never its value; a query parameter with a control character in its name is "query"."""
    if has_control_character(scope.get("path", "")):
        return "path", "path"
    query = bytes(scope.get("query_string", b"")).decode("latin-1")
    if "%" not in query and not has_control_character(query):
        return None
    # Decoded as Starlette decodes it for the routes (UTF-8, undecodable bytes replaced).
    for name, value in parse_qsl(query, keep_blank_values=True):
        if has_control_character(name):
            return "query", "query"
        if has_control_character(value):
            return name, "query"
    return None


class MetricsMiddleware:
    """Counts requests by route template (not raw path, so ids do not explode the label space)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: dict[str, Any] = {"code": 500}

        async def record_status(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, record_status)
        finally:
            route = getattr(scope.get("route"), "path", None) or _template(scope)
            requests, duration = _series(_method_label(scope.get("method", "")), route, status["code"])
            requests.inc()
            duration.observe(time.perf_counter() - started)


def _template(scope: Scope) -> str:
    """The path template of a route FastAPI does not put in the scope (Swagger UI, ReDoc, the OpenAPI
    document, mounts); "unmatched" when no route matches (a 404)."""
    app = scope.get("app")
    # A mount that matched has moved its prefix into root_path; match from the app's own root again.
    probe = {**scope, "root_path": scope.get("app_root_path", scope.get("root_path", ""))}
    for route in getattr(getattr(app, "router", None), "routes", ()):
        if route.matches(probe)[0] is not Match.NONE:
            return str(getattr(route, "path", "unmatched"))
    return "unmatched"


# RFC 9110's methods; any other token a client sends is counted as one label, so clients cannot add series.
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"})


def _method_label(method: str) -> str:
    return method if method in _METHODS else "OTHER"


# One entry per method, route template and status: bounded. prometheus_client's labels() validates and
# looks the series up under a lock every time, 2-3 us a request; the series objects never change.
@lru_cache(maxsize=4096)
def _series(method: str, route: str, status: int) -> tuple[Any, Any]:
    return (
        http_requests_total.labels(method, route, str(status)),
        http_request_duration_seconds.labels(method, route),
    )
