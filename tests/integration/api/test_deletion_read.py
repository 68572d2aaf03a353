"""GET /v1/deletions/{id} around the joined read: a small deletion in one statement, larger ones
continued after the joined rows, the page cut at the limit with a cursor to the rest."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from helpers.api import deletion_body
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.adapters.db.repositories import deletion_reads as reads
from app.adapters.db.session import run_read
from app.settings import Settings

PAGE = reads.JOINED_PARTITIONS + 3


@pytest.fixture
def run_executor() -> bool:
    return False


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"limits": settings.limits.model_copy(update={"max_page_size": PAGE})})


async def _read(client: httpx.AsyncClient, headers: dict[str, str], partitions: int) -> dict[str, Any]:
    body = deletion_body(*(("wide", p, 0) for p in reversed(range(partitions))))
    accepted = await client.post("/v1/deletions", json=body, headers=headers)
    assert accepted.status_code == 202, accepted.text
    response = await client.get(f"/v1/deletions/{accepted.json()['id']}", headers=headers)
    assert response.status_code == 200, response.text
    read: dict[str, Any] = response.json()
    return read


@pytest.mark.parametrize("partitions", [1, reads.JOINED_PARTITIONS, PAGE - 1, PAGE, PAGE + 5])
async def test_first_page_of_partitions(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any, partitions: int
) -> None:
    emulator.create_topic("wide", partitions=PAGE + 5)
    read = await _read(app_client, alice, partitions)
    shown = min(partitions, PAGE)
    assert [p["partition"] for p in read["partitions"]] == list(range(shown))
    assert read["partition_count"] == partitions
    assert read["counts"] == {"pending": partitions}
    assert (read["partitions_next"] is None) == (partitions <= PAGE)
    if read["partitions_next"] is not None:
        url = f"/v1/deletions/{read['id']}/partitions?cursor={read['partitions_next']}"
        rest = (await app_client.get(url, headers=alice)).json()["items"]
        assert len(rest) == partitions - PAGE


async def test_small_deletion_is_one_statement(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any, engine: AsyncEngine
) -> None:
    emulator.create_topic("wide", partitions=3)
    read = await _read(app_client, alice, 3)
    statements: list[str] = []

    @event.listens_for(engine.sync_engine, "before_cursor_execute")
    def _record(*args: Any) -> None:
        statements.append(args[2])

    maker = async_sessionmaker[AsyncSession](engine)
    found = await run_read(maker, reads.deletion_with_first_partitions, read["id"], PAGE)
    assert found is not None
    deletion, first = found
    assert (deletion.id, deletion.partition_count, len(first.rows)) == (read["id"], 3, 3)
    assert len([s for s in statements if s.startswith("SELECT")]) == 1
    assert await run_read(maker, reads.deletion_with_first_partitions, "nope", PAGE) is None
