"""End to end through the API: submit, follow to succeeded, and see the audit trail."""

from __future__ import annotations

import httpx
from api_helpers import deletion_body


async def test_submit_then_read(app_client: httpx.AsyncClient, alice: dict[str, str], orders: str) -> None:
    response = await app_client.post(
        "/v1/deletions", json=deletion_body((orders, 0, 5), (orders, 1, -1)), headers=alice
    )
    assert response.status_code == 202, response.text
    body = response.json()
    assert response.headers["location"] == f"/v1/deletions/{body['id']}"
    offsets = {p["partition"]: (p["requested_offset"], p["resolved_offset"]) for p in body["partitions"]}
    assert offsets == {0: (5, 5), 1: (-1, 20)}
    read = await app_client.get(response.headers["location"], headers=alice)
    assert read.status_code == 200
    assert read.json()["id"] == body["id"]
