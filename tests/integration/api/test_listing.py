"""Listing deletions (newest first) and a deletion's partitions, with filters and opaque cursors."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from helpers.api import assert_problem, deletion_body


@pytest.fixture
def run_executor() -> bool:
    return False


async def _pages(client: httpx.AsyncClient, url: str, headers: dict[str, str]) -> list[list[Any]]:
    pages, cursor = [], None
    while True:
        separator = "&" if "?" in url else "?"
        response = await client.get(url + (f"{separator}cursor={cursor}" if cursor else ""), headers=headers)
        assert response.status_code == 200, response.text
        body = response.json()
        pages.append(body["items"])
        cursor = body["next_cursor"]
        if cursor is None:
            return pages


async def _submit(client: httpx.AsyncClient, headers: dict[str, str], *parts: tuple[str, int, int]) -> str:
    response = await client.post("/v1/deletions", json=deletion_body(*parts), headers=headers)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


async def test_deletions_newest_first_with_cursor_and_filters(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str, emulator: Any
) -> None:
    emulator.create_topic("payments", partitions=1)
    ids = [await _submit(app_client, alice, (orders, i % 3, 1)) for i in range(5)]
    payments_id = await _submit(app_client, alice, ("payments", 0, 0))

    pages = await _pages(app_client, "/v1/deletions?limit=2", alice)
    assert [len(page) for page in pages] == [2, 2, 2]
    listed = [item["id"] for page in pages for item in page]
    assert listed == [payments_id, *reversed(ids)]

    by_topic = await _pages(app_client, "/v1/deletions?topic=payments", alice)
    assert [item["id"] for page in by_topic for item in page] == [payments_id]
    assert (await _pages(app_client, "/v1/deletions?cluster=other", alice)) == [[]]
    pending = await _pages(app_client, "/v1/deletions?status=pending&limit=100", alice)
    assert len(pending[0]) == 6
    assert (await _pages(app_client, "/v1/deletions?status=succeeded", alice)) == [[]]


async def test_partitions_paginate_in_topic_partition_order(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("wide", partitions=7)
    deletion_id = await _submit(app_client, alice, *(("wide", p, 0) for p in (6, 2, 0, 5, 1, 3, 4)))
    pages = await _pages(app_client, f"/v1/deletions/{deletion_id}/partitions?limit=3", alice)
    assert [[p["partition"] for p in page] for page in pages] == [[0, 1, 2], [3, 4, 5], [6]]
    for query in ("limit=0", "limit=-1", "status=done", "cursor=WzFd", "limit=abc"):
        url = f"/v1/deletions/{deletion_id}/partitions?{query}"
        assert_problem(await app_client.get(url, headers=alice), 422)
    filtered = await _pages(app_client, f"/v1/deletions/{deletion_id}/partitions?status=failed", alice)
    assert filtered == [[]]

    one = await app_client.get(f"/v1/deletions/{deletion_id}/partitions/wide/5", headers=alice)
    assert one.status_code == 200
    assert (one.json()["partition"], one.json()["status"], one.json()["resolved_offset"]) == (5, "pending", 0)
    assert_problem(await app_client.get(f"/v1/deletions/{deletion_id}/partitions/wide/9", headers=alice), 404)
    assert_problem(
        await app_client.get(f"/v1/deletions/{deletion_id}/partitions/wide/-1", headers=alice), 422
    )


async def test_deletion_read_shape(app_client: httpx.AsyncClient, alice: dict[str, str], orders: str) -> None:
    deletion_id = await _submit(app_client, alice, (orders, 0, 4), (orders, 2, -1))
    body = (await app_client.get(f"/v1/deletions/{deletion_id}", headers=alice)).json()
    assert body["status"] == "pending"
    assert body["counts"] == {"pending": 2}
    assert body["partition_count"] == 2
    assert body["topics"] == [orders]
    assert body["principal"] == "User:alice"
    assert body["partitions_next"] is None
    assert body["created_at"].endswith("Z")
    partition = body["partitions"][1]
    assert set(partition) == {
        "topic", "partition", "requested_offset", "resolved_offset", "status", "low_watermark",
        "leader_log_start_offset", "error_code", "error_message", "attempts", "updated_at", "spec",
    }  # fmt: skip
    assert (partition["requested_offset"], partition["resolved_offset"]) == (-1, 30)


async def test_unknown_deletion_is_404(app_client: httpx.AsyncClient, alice: dict[str, str]) -> None:
    for url in ("/v1/deletions/nope", "/v1/deletions/nope/partitions", "/v1/deletions/nope/partitions/t/0"):
        assert_problem(await app_client.get(url, headers=alice), 404)
    assert_problem(await app_client.post("/v1/deletions/nope/cancel", headers=alice), 404)
