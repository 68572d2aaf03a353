"""What every serving process runs, uvicorn with the body deadline (``app.api.middleware``) around the
app: every kind of response arrives whole (HEAD, 204, streamed, after 100 Continue, pipelined, kept
alive)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import uvicorn
from helpers.api import served
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from app.api.middleware import BodyDeadlineMiddleware


async def small(request: Request) -> Response:
    return Response(b'{"ok": true}', media_type="application/json")


async def empty(request: Request) -> Response:
    return Response(status_code=204)


async def echo(request: Request) -> Response:
    return Response(await request.body())


async def stream(request: Request) -> StreamingResponse:
    async def chunks() -> AsyncIterator[bytes]:
        for part in (b"one ", b"two ", b"three"):
            await asyncio.sleep(0.01)
            yield part

    return StreamingResponse(chunks())


APP = Starlette(
    routes=[
        Route("/small", small, methods=["GET", "HEAD"]),
        Route("/empty", empty),
        Route("/echo", echo, methods=["POST"]),
        Route("/stream", stream),
    ]
)


@pytest.fixture
async def port() -> AsyncIterator[int]:
    app = BodyDeadlineMiddleware(APP, timeout_seconds=10)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
    async with served(config) as port:
        yield port


async def _response(reader: asyncio.StreamReader) -> tuple[bytes, dict[bytes, bytes], bytes]:
    status, *lines = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n")[:-2]
    headers = dict(line.lower().split(b": ", 1) for line in lines)
    if headers.get(b"transfer-encoding") == b"chunked":
        body = b""
        while size := int((await reader.readline()).strip(), 16):
            body += (await reader.readexactly(size + 2))[:-2]
        await reader.readline()
        return status, headers, body
    return status, headers, await reader.readexactly(int(headers.get(b"content-length", b"0")))


async def test_each_kind_of_response_arrives_whole(port: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"GET /small HTTP/1.1\r\nHost: x\r\n\r\n")
        status, headers, body = await _response(reader)
        assert (status, headers[b"content-type"], body) == (
            b"HTTP/1.1 200 OK",
            b"application/json",
            b'{"ok": true}',
        )

        writer.write(b"HEAD /small HTTP/1.1\r\nHost: x\r\n\r\n")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=2)
        assert head.startswith(b"HTTP/1.1 200 OK")
        assert b"content-length: 12" in head

        writer.write(b"GET /empty HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (await _response(reader))[0] == b"HTTP/1.1 204 No Content"

        writer.write(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (await _response(reader))[2] == b"one two three"

        writer.write(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        continued = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=2)
        assert continued == b"HTTP/1.1 100 Continue\r\n\r\n"
        writer.write(b"hello")
        assert (await _response(reader))[2] == b"hello"

        writer.write(b"GET /small HTTP/1.1\r\nHost: x\r\n\r\nGET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (await _response(reader))[2] == b'{"ok": true}'
        assert (await _response(reader))[2] == b"one two three"

        writer.write(b"GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert (await _response(reader))[2] == b'{"ok": true}'
        assert await reader.read() == b""
    finally:
        writer.close()
