"""A client that trickles a request's head or body is dropped once the configured deadline passes (a real
uvicorn server on a loopback port, raw sockets); requests sent promptly, slow handlers and kept-alive
connections are not affected."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
import uvicorn
from helpers.api import served
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.server.protocol import configured_protocol
from app.server.serve import make_server
from app.settings import LimitSettings, Settings

TIMEOUT = 1.0
# How long past the deadline the server may take to close (scheduling on a shared machine).
SLACK = 2.0


async def echo(request: Request) -> Response:
    return Response(await request.body())


async def slow(request: Request) -> Response:
    await asyncio.sleep(TIMEOUT * 1.5)
    return Response(b"done")


APP = Starlette(routes=[Route("/echo", echo, methods=["POST"]), Route("/slow", slow)])


@pytest.fixture
async def port() -> AsyncIterator[int]:
    limits = LimitSettings(header_timeout_seconds=TIMEOUT, body_timeout_seconds=TIMEOUT)
    config = uvicorn.Config(
        APP, host="127.0.0.1", port=0, http=configured_protocol(limits), log_level="warning"
    )
    async with served(config) as port:
        yield port


async def closed_after(reader: asyncio.StreamReader, started: float) -> tuple[bytes, float]:
    """Everything the server sent until it closed the connection, and when it closed it."""
    received = await asyncio.wait_for(reader.read(), timeout=TIMEOUT + SLACK)
    return received, time.monotonic() - started


async def trickle(writer: asyncio.StreamWriter, data: bytes, interval: float) -> None:
    for byte in data:
        if writer.is_closing():
            return
        writer.write(bytes([byte]))
        try:
            await writer.drain()
        except ConnectionError:
            return
        await asyncio.sleep(interval)


@pytest.mark.parametrize("sent", [b"", b"GET /ec"], ids=["nothing", "half-a-request-line"])
async def test_a_stalled_request_head_is_dropped(port: int, sent: bytes) -> None:
    started = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(sent)
    received, elapsed = await closed_after(reader, started)
    writer.close()
    assert received.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert b"connection: close" in received
    assert received.endswith(b'"status": 408}')
    assert TIMEOUT * 0.9 <= elapsed <= TIMEOUT + SLACK


async def test_a_trickled_head_is_dropped_though_bytes_keep_coming(port: int) -> None:
    head = b"GET /slow HTTP/1.1\r\nhost: x\r\nx-padding: " + b"a" * 200 + b"\r\n\r\n"
    started = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    sending = asyncio.create_task(trickle(writer, head, TIMEOUT / 10))
    received, elapsed = await closed_after(reader, started)
    sending.cancel()
    writer.close()
    assert received.startswith(b"HTTP/1.1 408 ")
    assert elapsed <= TIMEOUT + SLACK


async def test_a_trickled_body_is_dropped(port: int) -> None:
    head = b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n"
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head)
    started = time.monotonic()
    sending = asyncio.create_task(trickle(writer, b"x" * 100, TIMEOUT / 10))
    received, elapsed = await closed_after(reader, started)
    sending.cancel()
    writer.close()
    assert received.startswith(b"HTTP/1.1 408 ")
    assert TIMEOUT * 0.9 <= elapsed <= TIMEOUT + SLACK


async def test_prompt_requests_slow_handlers_and_kept_alive_connections_are_served(port: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for request in (
        b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\nhello",
        b"GET /slow HTTP/1.1\r\nhost: x\r\n\r\n",
        b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\n\r\nbye",
    ):
        writer.write(request)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=TIMEOUT * 5)
        assert head.startswith(b"HTTP/1.1 200 "), head
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        await reader.readexactly(length)
        await asyncio.sleep(TIMEOUT * 0.6)  # idle between requests: uvicorn's keep-alive, not ours
    writer.close()


def test_serve_takes_the_deadlines_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PURGE_AUTH_DEV_ISSUER", "true")
    monkeypatch.setenv("PURGE_LIMITS_HEADER_TIMEOUT_SECONDS", "2.5")
    monkeypatch.setenv("PURGE_LIMITS_BODY_TIMEOUT_SECONDS", "7")
    protocol = make_server(Settings(), start_executor=False).config.http
    assert not isinstance(protocol, str)
    assert (protocol.header_timeout, protocol.body_timeout) == (2.5, 7.0)  # type: ignore[attr-defined]
