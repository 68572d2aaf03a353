"""The HTTP protocol every serving process speaks: uvicorn's httptools protocol plus two things uvicorn
does not offer.

What it buys:

- **Deadlines for reading a request's head and body.** uvicorn's keep-alive timeout only runs between a
  response and the next request's first byte: a client sending a request's head or body a byte at a
  time would hold its connection (and its memory) open for ever. Each connection has a deadline for
  the head of a request (from the connection, or from the request's first byte on a kept-alive
  connection) and one for its body (from the end of the head), set by
  ``PURGE_LIMITS_HEADER_TIMEOUT_SECONDS`` and ``PURGE_LIMITS_BODY_TIMEOUT_SECONDS``. When one passes the
  client gets a ``408`` (unless a response has started) and the connection closes.
- **One socket write per response instead of two.** uvicorn writes the status line and headers as soon
  as the app sends ``http.response.start`` and the body at ``http.response.body``. A socket write costs
  about as much CPU as the rest of a small GET's HTTP handling (the kernel does the receiving side's TCP
  work on loopback and in a pod network alike), so the head is held until the first body bytes, or the
  response's end, and written with them. Nothing else changes: the same parser, the same bytes on the
  wire, the same flow control; a streamed response's head goes out with its first chunk.

It subclasses ``uvicorn.protocols.http.httptools_impl.HttpToolsProtocol``, which is not public API:
``tests/integration/server/`` checks both behaviours against the installed uvicorn.
"""

from __future__ import annotations

import asyncio
import json

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from app.errors import type_url
from app.settings import LimitSettings

_TIMEOUT_BODY = json.dumps(
    {"type": type_url("request-timeout"), "title": "Request Timeout", "status": 408}
).encode()
REQUEST_TIMEOUT = b"".join(
    [
        b"HTTP/1.1 408 Request Timeout\r\n",
        b"content-type: application/problem+json\r\n",
        b"content-length: %d\r\n" % len(_TIMEOUT_BODY),
        b"connection: close\r\n\r\n",
        _TIMEOUT_BODY,
    ]
)


class HeadWithBody:
    """The transport as one response cycle sees it: the first write after the response started (its
    head) is held and written with the next one, or when the response ends or the transport closes.
    A ``100 Continue`` is written before the response starts, so it is never held."""

    __slots__ = ("_cycle", "_head", "_started", "transport")

    def __init__(self, transport: asyncio.Transport, cycle: RequestResponseCycle) -> None:
        self.transport = transport
        self._cycle = cycle
        self._head = b""
        self._started = False

    def write(self, data: bytes) -> None:
        if not self._started and self._cycle.response_started:
            self._started = True
            self._head = data
            return
        if self._head:
            data, self._head = self._head + data, b""
        self.transport.write(data)

    def flush(self) -> None:
        if self._head:
            head, self._head = self._head, b""
            self.transport.write(head)

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def is_closing(self) -> bool:
        return self.transport.is_closing()


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    """Gives each new response cycle a :class:`HeadWithBody` transport. A response that ends without
    writing a body (a HEAD, say) writes its held head when it completes.

    The read deadlines cost a float per request: one watchdog timer per connection checks the current
    deadline when it fires and re-arms itself only while one is set."""

    header_timeout = 10.0
    body_timeout = 30.0
    _read_deadline: float | None = None
    _watchdog: asyncio.TimerHandle | None = None
    _watchdog_at = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._read_by(self.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._read_deadline is None:  # a kept-alive connection's next request
            self._read_by(self.header_timeout)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._read_deadline = None

    def _read_by(self, timeout: float) -> None:
        deadline = self.loop.time() + timeout
        self._read_deadline = deadline
        if self._watchdog is None or deadline < self._watchdog_at:
            self._watch(deadline)

    def _watch(self, at: float) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
        self._watchdog_at = at
        self._watchdog = self.loop.call_at(at, self._check_deadline)

    def _check_deadline(self) -> None:
        self._watchdog = None
        deadline = self._read_deadline
        if deadline is None or self.transport.is_closing():
            return
        if deadline > self.loop.time():
            self._watch(deadline)
            return
        cycle = self.cycle
        if cycle is None or cycle.response_complete or not cycle.response_started:
            self.transport.write(REQUEST_TIMEOUT)
        if cycle is not None:
            cycle.keep_alive = False
        self.transport.close()

    def on_headers_complete(self) -> None:
        self._read_by(self.body_timeout)
        previous = self.cycle
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is None or cycle is previous:  # an upgrade: no new cycle
            return
        held = HeadWithBody(self.transport, cycle)
        cycle.transport = held  # type: ignore[assignment]
        on_response = cycle.on_response

        def flush_then() -> None:
            held.flush()
            on_response()

        cycle.on_response = flush_then


def configured_protocol(limits: LimitSettings) -> type[CoalescingHttpToolsProtocol]:
    """The protocol class with the read deadlines of ``limits`` (uvicorn builds one per connection)."""

    class ConfiguredHttpToolsProtocol(CoalescingHttpToolsProtocol):
        header_timeout = limits.header_timeout_seconds
        body_timeout = limits.body_timeout_seconds

    return ConfiguredHttpToolsProtocol
