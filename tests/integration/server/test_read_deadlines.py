"""A client that stalls or trickles a request's body gets a 408 problem and its connection closed once the
body deadline passes (a real uvicorn server on a loopback port, raw sockets); requests sent promptly,
requests without a body, slow handlers and kept-alive connections are not affected. The deadline for a
request's head is the reverse proxy's (``deploy/nginx/kafka-purge.conf``, checked in ``tests/deploy``)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

import pytest
import uvicorn
from helpers.api import served
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.api.middleware import BodyDeadlineMiddleware, RequestIdMiddleware
from app.errors import type_url
from app.server.serve import make_server
from app.settings import Settings

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
    app = RequestIdMiddleware(BodyDeadlineMiddleware(APP, timeout_seconds=TIMEOUT))
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
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


def assert_request_timeout(received: bytes) -> None:
    head, body = received.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert b"connection: close" in head.lower()
    assert b"content-type: application/problem+json" in head.lower()
    problem = json.loads(body)
    assert (problem["type"], problem["status"], problem["instance"]) == (
        type_url("request-timeout"),
        408,
        "/echo",
    )
    assert problem["request_id"]


@pytest.mark.parametrize("sent", [b"", b"hel"], ids=["nothing", "part-of-it"])
async def test_a_stalled_body_is_dropped(port: int, sent: bytes) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n" + sent)
    started = time.monotonic()
    received, elapsed = await closed_after(reader, started)
    writer.close()
    assert_request_timeout(received)
    assert TIMEOUT * 0.9 <= elapsed <= TIMEOUT + SLACK


async def test_a_trickled_body_is_dropped_though_bytes_keep_coming(port: int) -> None:
    head = b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n"
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head)
    started = time.monotonic()
    sending = asyncio.create_task(trickle(writer, b"x" * 100, TIMEOUT / 10))
    received, elapsed = await closed_after(reader, started)
    sending.cancel()
    writer.close()
    assert_request_timeout(received)
    assert TIMEOUT * 0.9 <= elapsed <= TIMEOUT + SLACK


async def test_a_chunked_body_has_the_same_deadline(port: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /echo HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n")
    started = time.monotonic()
    received, elapsed = await closed_after(reader, started)
    writer.close()
    assert_request_timeout(received)
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


async def test_a_handler_slower_than_the_deadline_after_its_body_is_served(port: int) -> None:
    async def body_then_wait(request: Request) -> Response:
        body = await request.body()
        await asyncio.sleep(TIMEOUT * 1.5)
        return Response(body)

    APP.router.routes.append(Route("/late", body_then_wait, methods=["POST"]))
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /late HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nok")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=TIMEOUT * 5)
        assert head.startswith(b"HTTP/1.1 200 "), head
        assert await reader.readexactly(2) == b"ok"
        writer.close()
    finally:
        APP.router.routes.pop()


def test_serve_takes_the_body_deadline_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PURGE_AUTH_DEV_ISSUER", "true")
    monkeypatch.setenv("PURGE_LIMITS_BODY_TIMEOUT_SECONDS", "7")
    app = make_server(Settings(), start_executor=False).config.app
    deadlines = [m.kwargs for m in app.user_middleware if m.cls is BodyDeadlineMiddleware]
    assert deadlines == [{"timeout_seconds": 7.0}]
