"""Listing deletions shows a caller only what they may see: the pages, their lengths and their cursors."""

from __future__ import annotations

import base64
import json
from typing import Any

from helpers.authz import Service, deletion


def decoded(cursor: str) -> list[Any]:
    key: list[Any] = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    return key


async def test_cursors_name_only_deletions_the_caller_may_see(service: Service, orders: Any) -> None:
    admin = await service.headers("admin")
    submitted: dict[str, list[str]] = {"orders.eu": [], "payments": []}
    # Newest first: payments (hidden from bob) interleaved with orders.eu, and the newest hidden.
    for topic in ["orders.eu", "payments", "payments", "orders.eu", "payments", "orders.eu", "payments"]:
        accepted = await service.client.post("/v1/deletions", json=deletion((topic, 0, 1)), headers=admin)
        assert accepted.status_code == 202, accepted.text
        submitted[topic].append(accepted.json()["id"])
    await service.grant(principal="User:bob", operation="DESCRIBE", resource_name="orders.eu")
    bob = await service.headers("bob")

    pages, cursors, cursor = [], [], None
    while True:
        params = {"limit": 1, **({"cursor": cursor} if cursor else {})}
        response = await service.client.get("/v1/deletions", params=params, headers=bob)
        assert response.status_code == 200, response.text
        pages.append([item["id"] for item in response.json()["items"]])
        cursor = response.json()["next_cursor"]
        if cursor is None:
            break
        cursors.append(decoded(cursor)[1])

    visible = list(reversed(submitted["orders.eu"]))
    assert pages == [[deletion_id] for deletion_id in visible]
    assert cursors == visible[:-1]
    filtered = await service.client.get(
        "/v1/deletions", params={"topic": "payments", "limit": 1}, headers=bob
    )
    assert filtered.json() == {"items": [], "next_cursor": None}
