"""uvicorn's httptools protocol, sending each response's head in one write with its first body bytes.

uvicorn writes the status line and headers as soon as the app sends ``http.response.start`` and the body
at ``http.response.body``: two socket writes per response. A socket write costs about as much CPU as
the rest of a small GET's HTTP handling (the kernel does the receiving side's TCP work on loopback and
in a pod network alike), so the head is held until the first body bytes, or the response's end, and
written with them. Nothing else changes: the same parser, the same bytes on the wire, the same flow
control; a streamed response's head goes out with its first chunk.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle


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
    writing a body (a HEAD, say) writes its held head when it completes."""

    def on_headers_complete(self) -> None:
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
