"""A COMMIT whose connection is lost (PostgreSQL): the request is answered from what the database did.

The service reaches PostgreSQL through a TCP proxy that cuts the connection of the transaction
storing a deletion (the one that sent ``INSERT INTO deletion``) at its COMMIT:

- after the server answered it: the deletion committed; ``txid_status`` on another connection says
  so, and the request is answered 202 as if nothing happened;
- before the COMMIT reached the server: the server rolled the transaction back; ``txid_status`` says
  so and the whole request runs again (none of its work committed);
- after the server answered it, with every ``txid_status`` question cut too: the outcome is unknown, so
  the group commit (``app.services.deletions.group_commit``) stores the deletion again, with the same
  id; the duplicate key says it committed and the stored deletion is the answer.

In every case the deletion is stored exactly once with one ``deletion.requested`` event.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import httpx
import pytest

PG = ("127.0.0.1", 5432)
INSERT = b"INSERT INTO deletion "
COMMIT = b"COMMIT"
OUTCOME = b"txid_status"


class CommitCutter:
    """A TCP proxy to PostgreSQL. Once ``arm(when)`` was called, it cuts the next connection whose
    transaction inserted a deletion at its COMMIT: "before" forwarding it, or "after" the server's
    answer came (which is dropped). With ``cut_outcome`` it also cuts every connection that asks
    ``txid_status``."""

    def __init__(self) -> None:
        self.when: str | None = None
        self.cut_outcome = False
        self.cuts: list[str] = []
        self._server: asyncio.Server | None = None

    def arm(self, when: str, *, cut_outcome: bool = False) -> None:
        self.when, self.cut_outcome = when, cut_outcome

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _connection(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection(*PG)
        drop_answer = asyncio.Event()

        async def upstream() -> None:
            inserted = False
            while data := await client_r.read(65536):
                inserted = inserted or INSERT in data
                if self.cut_outcome and OUTCOME in data:
                    self.cuts.append("outcome")
                    return
                if inserted and COMMIT in data and self.when is not None:
                    when, self.when = self.when, None
                    self.cuts.append(when)
                    if when == "before":
                        return
                    drop_answer.set()
                server_w.write(data)
                await server_w.drain()
                if COMMIT in data:
                    inserted = False

        async def downstream() -> None:
            while data := await server_r.read(65536):
                if drop_answer.is_set():
                    return
                client_w.write(data)
                await client_w.drain()

        pumps = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pump in pumps:
                pump.cancel()
            for writer in (client_w, server_w):
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()


@pytest.fixture
async def cutter() -> AsyncIterator[tuple[CommitCutter, int]]:
    proxy = CommitCutter()
    port = await proxy.start()
    yield proxy, port
    await proxy.stop()


@pytest.fixture
def migrated_url(postgresql_migrated_url: str, cutter: tuple[CommitCutter, int]) -> str:
    """The test's PostgreSQL database (the app fixtures migrate and use it) reached through the proxy,
    without TLS so that the proxy sees the statements."""
    return postgresql_migrated_url.replace("127.0.0.1:5432", f"127.0.0.1:{cutter[1]}") + "?ssl=disable"


@pytest.fixture
def run_executor() -> bool:
    return False


async def _stored(url: str, deletion_id: str) -> tuple[int, int]:
    """(deletions stored with ``deletion_id``, their ``deletion.requested`` events)."""
    connection = await asyncpg.connect(url.replace("postgresql+asyncpg", "postgresql"))
    try:
        rows = await connection.fetchval("SELECT count(*) FROM deletion WHERE id = $1", deletion_id)
        events = await connection.fetchval(
            "SELECT count(*) FROM audit_event WHERE action = 'deletion.requested' AND deletion_id = $1",
            deletion_id,
        )
    finally:
        await connection.close()
    return int(rows), int(events)


def _request(partitions: int) -> dict[str, Any]:
    return {
        "cluster": "demo",
        # Offset 0 of an empty topic: a concrete offset, nothing to produce.
        "partitions": [{"topic": "orders", "partition": p, "offset": 0} for p in range(partitions)],
        "reason": "lost commit",
    }


@pytest.mark.parametrize(
    ("when", "cut_outcome", "cuts"),
    [
        ("after", False, ["after"]),
        ("before", False, ["before"]),
        ("after", True, ["after", "outcome"]),
    ],
    ids=["answer lost, committed", "cut before the server", "outcome unknown, stored again"],
)
async def test_a_deletion_cut_at_its_commit_is_stored_once(
    app_client: httpx.AsyncClient,
    token: Callable[[str], Awaitable[str]],
    cutter: tuple[CommitCutter, int],
    postgresql_migrated_url: str,
    emulator: Any,
    when: str,
    cut_outcome: bool,
    cuts: list[str],
) -> None:
    partitions = 2
    emulator.create_topic("orders", partitions=partitions, replication_factor=3)
    alice = {"Authorization": f"Bearer {await token('alice')}"}
    proxy, _ = cutter
    proxy.arm(when, cut_outcome=cut_outcome)
    response = await app_client.post("/v1/deletions", json=_request(partitions), headers=alice)
    assert response.status_code == 202, response.text
    assert sorted(set(proxy.cuts)) == cuts
    deletion_id = response.json()["id"]
    assert await _stored(postgresql_migrated_url, deletion_id) == (1, 1)
    answer = await app_client.get(f"/v1/deletions/{deletion_id}", headers=alice)
    assert answer.status_code == 200
    assert len(answer.json()["partitions"]) == partitions
