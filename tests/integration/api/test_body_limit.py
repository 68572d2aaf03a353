"""Bodies over the limit (1 MiB) are refused with 413 before anything parses them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import httpx
import pytest
import uvicorn
from helpers.api import assert_problem, served

from app.main import create_app
from app.settings import Settings

FORTY_MB = 40 * 1024 * 1024


@pytest.fixture
def run_executor() -> bool:
    return False


async def test_declared_oversize_body_is_413_at_once(
    app_client: httpx.AsyncClient, alice: dict[str, str]
) -> None:
    body = b'{"partitions": [' + b'{"topic":"t","partition":0,"offset":1},' * (FORTY_MB // 40) + b"]}"
    started = time.perf_counter()
    response = await app_client.post(
        "/v1/deletions", content=body, headers={**alice, "content-type": "application/json"}
    )
    elapsed = time.perf_counter() - started
    problem = assert_problem(response, 413)
    assert "1048576" in problem["detail"]
    assert len(response.content) < 1_000
    assert elapsed < 1.0


async def test_chunked_body_over_the_limit_is_refused_once_drained(
    app_client: httpx.AsyncClient, alice: dict[str, str]
) -> None:
    """Counted while streaming; past the limit the rest is read and discarded, then the 413 answers."""
    sent = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal sent
        for _ in range(100):
            sent += 64 * 1024
            yield b" " * (64 * 1024)

    response = await app_client.post(
        "/v1/deletions", content=chunks(), headers={**alice, "content-type": "application/json"}
    )
    assert_problem(response, 413)
    assert sent == 100 * 64 * 1024


async def test_chunked_body_under_the_limit_reaches_the_app(
    app_client: httpx.AsyncClient, alice: dict[str, str]
) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"cluster": "nowhere", "partitions": [{"topic": "t", "partition": 0, "offset": 1}],'
        yield b' "reason": "chunked"}'

    response = await app_client.post(
        "/v1/deletions", content=chunks(), headers={**alice, "content-type": "application/json"}
    )
    assert_problem(response, 404)


async def test_a_client_reads_the_413_after_sending_its_whole_body(settings: Settings) -> None:
    """Over a real socket, an 8 MiB body with its Content-Length, sent whole before the answer is read
    (as curl, requests and httpx do): the service reads and discards it, so the 413 arrives instead of a
    connection reset."""
    async with served(_config(settings)) as port:
        body = b" " * (8 * 1024 * 1024)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            response = await client.post(
                "/v1/deletions", content=body, headers={"content-type": "application/json"}
            )
        problem = assert_problem(response, 413)
        assert problem["type"] == "/problems/payload-too-large"


async def test_real_server_answers_413_without_reading_the_body(settings: Settings) -> None:
    """Over a real socket: headers announce 40 MB (past what is drained), only 64 KB are sent, and the
    413 still arrives."""
    async with served(_config(settings)) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        head = (
            f"POST /v1/deletions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {FORTY_MB}\r\n\r\n"
        )
        writer.write(head.encode() + b" " * 65536)
        await writer.drain()
        started = time.perf_counter()
        status_line = await asyncio.wait_for(reader.readline(), timeout=5)
        assert status_line.startswith(b"HTTP/1.1 413"), status_line
        assert time.perf_counter() - started < 1.0
        writer.close()


async def test_a_refusal_of_the_path_reads_the_body_and_keeps_the_connection(
    settings: Settings,
) -> None:
    """Over a real socket: a POST with a control character in its path, its body sent after the head
    (as urllib3 sends it, in a write of its own) and after a pause. The 422 waits for the body and the
    connection stays open for the next request: closed with the body still on its way, the connection
    would be reset and the answer lost."""
    body = b'{"decision": "approve"}'
    head = (
        "POST /v1/clusters/demo/policies/a%01b/approvals HTTP/1.1\r\nHost: x\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    async with served(_config(settings)) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(head.encode())
        await writer.drain()
        await asyncio.sleep(0.3)
        writer.write(body)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        refusal = await _answer(reader)
        health = await _answer(reader)
        writer.close()
    assert refusal[0].startswith(b"HTTP/1.1 422"), refusal
    assert b'"parameter": "path"' in refusal[1], refusal
    assert health[0].startswith(b"HTTP/1.1 200"), health


async def _answer(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """(the head, the body) of the next answer on the connection."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.lower().split(b"\r\n")
        if line.startswith(b"content-length:")
    )
    return head, await asyncio.wait_for(reader.readexactly(length), timeout=5)


def _config(settings: Settings) -> uvicorn.Config:
    app = create_app(settings, run_executor=False)
    return uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
