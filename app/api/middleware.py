"""The request pipeline's pure ASGI middleware, in the order a request meets them (``app.main``): request
ids, request metrics, the body's deadline, the body-size guard, control characters in the path and query.

The body's deadline runs from the moment the app is called, which is when the server has read the
request's head, for ``PURGE_LIMITS_BODY_TIMEOUT_SECONDS``: a client sending a body a byte at a time
would otherwise hold its connection, its task and the bytes read so far for as long as it likes. When
it passes before the body's last byte, the client gets a ``408`` problem (unless a response has started)
with ``connection: close``, and whatever the app sends after that is dropped. A request without a body,
a body read to its end, and the time a handler takes are not limited. The head's deadline is not the
app's to keep (an ASGI app is called once the head is in): the reverse proxy in front keeps it
(``deploy/nginx/kafka-purge.conf``, nginx's ``client_header_timeout``); uvicorn's ``timeout_keep_alive``
closes a kept-alive connection that stays idle between requests.

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

import asyncio
import re
import time
import uuid
from abc import ABC, abstractmethod
from functools import lru_cache
from typing import Any

from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.problems import send_problem
from app.logs import log_context
from app.metrics import http_request_duration_seconds, http_requests_total
from app.text import CONTROL_CHARACTER_DETAIL, control_character_parameter

REQUEST_ID_HEADER = b"x-request-id"
TIMEOUT_SLUG = "request-timeout"
TIMEOUT_TITLE = "Request Timeout"
DRAIN_BYTES = 16 * 1024 * 1024
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:\-]{1,64}")


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


class HttpMiddleware(ABC):
    """Pure ASGI middleware of HTTP requests (:meth:`handle`); other scopes, such as the lifespan, pass
    through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.handle(scope, receive, send)

    @abstractmethod
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """What the middleware does with one HTTP request."""


class RequestIdMiddleware(HttpMiddleware):
    """Takes a sane ``X-Request-ID`` from the caller or makes one; stores it and echoes it back."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
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


class BodyTimedOut(Exception):
    """Raised by ``receive`` when the body's deadline passed; the middleware answers for it, whichever
    error the app makes of it on its way out."""


class _Reading:
    """One request's body as the deadline sees it."""

    __slots__ = ("complete", "response_started", "timed_out")

    def __init__(self) -> None:
        self.complete = False
        self.timed_out = False
        self.response_started = False


def _has_body(scope: Scope) -> bool:
    for key, value in scope.get("headers", ()):
        if key == b"transfer-encoding" or (key == b"content-length" and value not in (b"0", b"")):
            return True
    return False


class BodyDeadlineMiddleware(HttpMiddleware):
    def __init__(self, app: ASGIApp, timeout_seconds: float) -> None:
        super().__init__(app)
        self.timeout_seconds = timeout_seconds

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not _has_body(scope):
            await self.app(scope, receive, send)
            return
        deadline = asyncio.get_running_loop().time() + self.timeout_seconds
        reading = _Reading()

        async def receive_by_deadline() -> Message:
            if reading.complete:
                return await receive()
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                reading.timed_out = True
                raise BodyTimedOut from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                reading.complete = True
            return message

        async def send_in_time(message: Message) -> None:
            if reading.timed_out:
                return
            if message["type"] == "http.response.start":
                reading.response_started = True
            await send(message)

        try:
            await self.app(scope, receive_by_deadline, send_in_time)
        except Exception:
            # Whatever the app raises once the body is late follows from it: the answer is the 408.
            if not reading.timed_out:
                raise
        if reading.timed_out and not reading.response_started:
            detail = "The request body was not received in time."
            await send_problem(scope, send, 408, TIMEOUT_SLUG, TIMEOUT_TITLE, detail, close=True)


class BodySizeLimitMiddleware(HttpMiddleware):
    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        super().__init__(app)
        self.max_body_bytes = max_body_bytes

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = _header(scope, b"content-length")
        if declared is not None:
            if not declared.isdigit():
                bad = ("malformed-request", "Malformed request", "Bad Content-Length")
                await send_problem(scope, send, 400, *bad, close=True)
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


class ControlCharacterMiddleware(HttpMiddleware):
    """Answers 422 to a request whose path or query (percent-decoded, as routing and parameters see them)
    holds a control character (``app.text``), before any route reads a parameter."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = bytes(scope.get("query_string", b"")).decode("latin-1")
        refused = control_character_parameter(scope.get("path", ""), query)
        if refused is None:
            await self.app(scope, receive, send)
            return
        name, where = refused
        error = {"parameter": name, "in": where, "detail": CONTROL_CHARACTER_DETAIL}
        detail = "The request has invalid fields; see errors."
        drained = await _drained(scope, receive, 0)
        refusal = ("validation-failed", "Request is not valid", detail, [error])
        await send_problem(scope, send, 422, *refusal, close=not drained)


class MetricsMiddleware(HttpMiddleware):
    """Counts requests by route template (not raw path, so ids do not explode the label space)."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
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
