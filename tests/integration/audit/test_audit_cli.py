"""``kafka-purge audit verify --checkpoint FILE`` against the service over real HTTP: it posts the
checkpoint saved from the log and exits non-zero once the chain contradicts it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx
import pytest
import uvicorn
from helpers.audit import append, hash_of, wait_until
from pydantic import SecretStr
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.checkpoints import generate_private_key
from app.cli.main import main
from app.main import create_app
from app.server.serve import bind_socket
from app.settings import AuditSettings, Settings

Sessions = async_sessionmaker[AsyncSession]
Tamper = Callable[[str], Awaitable[None]]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    audit = AuditSettings(signing_key=SecretStr(generate_private_key()), checkpoint_every_events=1)
    return settings.model_copy(update={"audit": audit})


@pytest.fixture
async def service_url(settings: Settings) -> AsyncIterator[str]:
    """The app served by uvicorn on a free port, with its executor and checkpointer."""
    sock = bind_socket("127.0.0.1", 0)
    config = uvicorn.Config(create_app(settings), log_config=None, lifespan="on")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    await wait_until(lambda: server.started)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await task
        sock.close()


async def test_verify_with_a_checkpoint_from_the_log(
    service_url: str,
    settings: Settings,
    sessionmaker: Sessions,
    tamper: Tamper,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = settings.auth.dev_clients["alice"].get_secret_value()
    async with httpx.AsyncClient(base_url=service_url) as client:
        grant = await client.post(
            "/oauth/token", data={"grant_type": "client_credentials"}, auth=("alice", secret)
        )
    monkeypatch.setenv("PURGE_TOKEN", grant.json()["access_token"])
    with caplog.at_level(logging.INFO, logger="kafka_purge.audit"):
        await append(sessionmaker, 3)
        # The service's checkpointer signs the head and logs the checkpoint.
        await wait_until(lambda: "audit checkpoint event_id=3" in caplog.text)
    saved = tmp_path / "checkpoint.log"
    saved.write_text("".join(line + "\n" for line in caplog.text.splitlines() if "event_id=3" in line))

    async def verify() -> int:
        argv = ["audit", "verify", "--url", service_url, "--checkpoint", str(saved)]
        return await asyncio.to_thread(main, argv)

    assert await verify() == 0
    assert "ok: 3 events verified" in capsys.readouterr().out
    await tamper("DELETE FROM audit_event WHERE id = 3")
    await tamper(f"UPDATE audit_head SET last_event_id = 2, last_hash = '{await hash_of(sessionmaker, 2)}'")
    await tamper("DELETE FROM audit_checkpoint")
    assert await verify() == 5  # failed: the chain contradicts the checkpoint
    out = capsys.readouterr().out
    assert "BROKEN at event 3" in out
    assert "checkpoint (supplied): event 3" in out
    saved.write_text("no checkpoint here\n")
    assert await verify() == 2
