"""The 202 of a deletion with more partitions than one page: its first page and cursor, as a read gives."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from helpers.api import deletion_body

from app.settings import LimitSettings, Settings


@pytest.fixture
def run_executor() -> bool:
    return False


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"limits": LimitSettings(max_page_size=3)})


async def _rest(
    client: httpx.AsyncClient, headers: dict[str, str], url: str, cursor: str | None
) -> list[Any]:
    items: list[Any] = []
    while cursor is not None:
        page = (await client.get(f"{url}/partitions?limit=3&cursor={cursor}", headers=headers)).json()
        items.extend(page["items"])
        cursor = page["next_cursor"]
    return items


@pytest.mark.parametrize("topics", [("wide",), ("wide", "Wide-b", "a.wide")])
async def test_accepted_first_page_continues_with_its_cursor(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any, topics: tuple[str, ...]
) -> None:
    for topic in topics:
        emulator.create_topic(topic, partitions=4)
    parts = [(topic, p, 0) for topic in reversed(topics) for p in (3, 0, 2, 1)]
    accepted = await app_client.post("/v1/deletions", json=deletion_body(*parts), headers=alice)
    assert accepted.status_code == 202, accepted.text
    url = accepted.headers["Location"]
    read = (await app_client.get(url, headers=alice)).json()
    body = accepted.json()
    assert body == read
    assert len(body["partitions"]) == 3
    assert body["counts"] == {"pending": 4 * len(topics)}
    rest = await _rest(app_client, alice, url, body["partitions_next"])
    listed = [(p["topic"], p["partition"]) for p in body["partitions"] + rest]
    assert sorted(listed) == sorted((t, p) for t, p, _ in parts)
