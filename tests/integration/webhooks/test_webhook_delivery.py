"""Webhook deliveries against real receivers (both databases): targets are checked again at every
attempt, after resolving them, so a webhook stored earlier that names a loopback address (in any
spelling, or by a name that resolves to one) is refused once its network is not opened; any exception in
an attempt is a failed attempt, dead-lettered at ``max_attempts``; and a failure says only "refused",
"no HTTP answer" or the HTTP status an allowed target answered, the same for a closed port as for an open
port that does not speak HTTP.

Webhooks are written to the database directly here, as one registered under an earlier configuration
(or an earlier version) would be."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from helpers.webhook_receiver import receiver_process
from helpers.webhooks import stored_webhook
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories.webhooks import enqueue_events
from app.adapters.db.session import read_session, write_transaction
from app.adapters.db.webhook_models import WebhookDelivery
from app.domain.webhook_events import DeletionEvent, EventType
from app.settings import WebhookSettings
from app.worker.webhooks import NO_ANSWER, REFUSED, WebhookDispatcher

Maker = async_sessionmaker[AsyncSession]
LOOPBACK = "127.0.0.0/8,::1/128"


def webhook_settings(allowed_networks: str = "", max_attempts: int = 3) -> WebhookSettings:
    return WebhookSettings(
        allowed_networks=allowed_networks,
        max_attempts=max_attempts,
        backoff_initial_seconds=0.001,
        backoff_max_seconds=0.001,
        timeout_seconds=5,
        lease_seconds=10,
        poll_interval_seconds=3600,
    )


async def deliveries(sessionmaker: Maker) -> dict[str, WebhookDelivery]:
    """The deliveries by webhook id (one event each)."""
    async with read_session(sessionmaker) as session:
        rows = (await session.execute(select(WebhookDelivery))).scalars()
        return {row.webhook_id: row for row in rows}


async def deliver_all(sessionmaker: Maker, settings: WebhookSettings) -> dict[str, WebhookDelivery]:
    """Write one event for every webhook, and run a dispatcher until no delivery is pending (at most
    four rounds per allowed attempt); the deliveries by webhook id."""
    event = DeletionEvent(EventType.SUCCEEDED, "d-1", "demo", "succeeded", {"total": 1}, "User:a")
    async with write_transaction(sessionmaker) as session:
        await enqueue_events(session, [event])
    dispatcher = WebhookDispatcher(sessionmaker, settings, instance_id="test")
    await dispatcher.start()
    try:
        for _ in range(4 * settings.max_attempts):
            await dispatcher.run_once()
            await dispatcher.settle()
            found = await deliveries(sessionmaker)
            if all(d.status != "pending" for d in found.values()):
                return found
            await asyncio.sleep(0.01)  # the next attempt's backoff
        return await deliveries(sessionmaker)
    finally:
        await dispatcher.stop()


async def test_loopback_targets_are_refused_at_delivery(sessionmaker: Maker, tmp_path: Path) -> None:
    """Every spelling of the receiver's loopback address, and ``localhost`` (which only resolving shows
    to be loopback when delivering), reach it only while loopback is an opened network."""
    with receiver_process(tmp_path) as receiver:
        port = receiver.url.rsplit(":", 1)[1]
        urls = [
            f"http://localhost:{port}/hook",
            f"http://127.0.0.1:{port}/hook",
            f"http://0x7f000001:{port}/hook",
            f"http://2130706433:{port}/hook",
            f"http://127.1:{port}/hook",
            f"http://[::ffff:127.0.0.1]:{port}/hook",
        ]
        ids = [await stored_webhook(sessionmaker, url) for url in urls]
        found = await deliver_all(sessionmaker, webhook_settings(max_attempts=2))
        assert {(d.status, d.attempts, d.last_status_code, d.last_error) for d in found.values()} == {
            ("dead", 2, None, REFUSED)
        }
        assert set(found) == set(ids)
        assert receiver.requests() == []

        # The same targets, with loopback opened: each name and spelling reaches the receiver.
        async with write_transaction(sessionmaker) as session:
            for row in (await session.execute(select(WebhookDelivery))).scalars():
                await session.delete(row)
        found = await deliver_all(sessionmaker, webhook_settings(LOOPBACK))
        assert {(d.status, d.last_status_code) for d in found.values()} == {("delivered", 204)}
        assert len(receiver.requests()) == len(urls)


async def test_a_name_resolving_to_a_closed_network_is_refused(sessionmaker: Maker, tmp_path: Path) -> None:
    """The machine's own name is no ``localhost`` name, yet resolves to loopback or a private address."""
    name = socket.gethostname()
    try:
        resolved = {info[4][0] for info in socket.getaddrinfo(name, None)}
    except socket.gaierror:
        pytest.skip(f"{name} does not resolve here")
    with receiver_process(tmp_path) as receiver:
        port = receiver.url.rsplit(":", 1)[1]
        await stored_webhook(sessionmaker, f"http://{name}:{port}/hook")
        (found,) = (await deliver_all(sessionmaker, webhook_settings(max_attempts=1))).values()
        assert (found.status, found.last_error) == ("dead", REFUSED), resolved
        assert receiver.requests() == []


async def test_any_exception_in_an_attempt_is_a_failed_attempt(sessionmaker: Maker) -> None:
    """A stored URL with a tab in its host, and a secret that no longer signs: each attempt fails, is
    counted, and the delivery is dead after ``max_attempts``, with a plain ``last_error``."""
    tabbed = await stored_webhook(sessionmaker, "http://127.0.0.2\t.hooks.internal/")
    unsigned = await stored_webhook(sessionmaker, "http://hooks.invalid/hook", secret="whsec_!!!")
    found = await deliver_all(sessionmaker, webhook_settings(LOOPBACK))
    assert (found[tabbed].status, found[tabbed].attempts, found[tabbed].last_error) == ("dead", 3, REFUSED)
    assert (found[unsigned].status, found[unsigned].attempts, found[unsigned].last_error) == (
        "dead",
        3,
        NO_ANSWER,
    )


@asynccontextmanager
async def listening(answer: bytes, *, reads_request: bool = False) -> AsyncIterator[int]:
    """A TCP port on loopback that writes ``answer`` to each connection (after reading an HTTP request
    when ``reads_request``) and closes it."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if reads_request:
            head = (await reader.readuntil(b"\r\n\r\n")).decode().lower()
            length = next(
                int(line.split(":")[1]) for line in head.splitlines() if line.startswith("content-length")
            )
            await reader.readexactly(length)
        writer.write(answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_failure_does_not_tell_a_closed_port_from_an_open_one(sessionmaker: Maker) -> None:
    async with (
        listening(b"SSH-2.0-OpenSSH_9.6\r\n") as ssh,
        listening(b"") as silent,
        listening(
            b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n", reads_request=True
        ) as http,
    ):
        closed = await stored_webhook(sessionmaker, f"http://127.0.0.1:{closed_port()}/hook")
        not_http = await stored_webhook(sessionmaker, f"http://127.0.0.1:{ssh}/hook")
        hangs_up = await stored_webhook(sessionmaker, f"http://127.0.0.1:{silent}/hook")
        failing = await stored_webhook(sessionmaker, f"http://127.0.0.1:{http}/hook")
        found = await deliver_all(sessionmaker, webhook_settings(LOOPBACK, max_attempts=1))
    outcomes = {key: (d.status, d.last_status_code, d.last_error) for key, d in found.items()}
    assert outcomes[closed] == outcomes[not_http] == outcomes[hangs_up] == ("dead", None, NO_ANSWER)
    assert outcomes[failing] == ("dead", 500, "failed: HTTP 500")
