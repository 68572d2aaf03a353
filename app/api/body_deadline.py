"""The deadline for reading a request's body: a pure ASGI middleware.

A client sending a body a byte at a time would otherwise hold its connection, its task and the bytes read
so far for as long as it likes. The deadline runs from the moment the app is called, which is when the
server has read the request's head, for ``PURGE_LIMITS_BODY_TIMEOUT_SECONDS``. When it passes before the
body's last byte, the client gets a ``408`` problem (unless a response has started) with
``connection: close``, and whatever the app sends after that is dropped. A request without a body, a
body read to its end, and the time a handler takes are not limited.

The deadline for a request's head (request line and headers) is not the app's to keep: an ASGI app is
called once the head is in. It is kept by the reverse proxy in front (``deploy/nginx/kafka-purge.conf``,
nginx's ``client_header_timeout``); uvicorn's ``timeout_keep_alive`` closes a kept-alive connection that
stays idle between requests.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.middleware import send_problem

TIMEOUT_SLUG = "request-timeout"
TIMEOUT_TITLE = "Request Timeout"


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


class BodyDeadlineMiddleware:
    def __init__(self, app: ASGIApp, timeout_seconds: float) -> None:
        self.app = app
        self.timeout_seconds = timeout_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _has_body(scope):
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
