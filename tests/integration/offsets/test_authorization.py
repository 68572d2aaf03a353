"""The offsets view needs DESCRIBE on the topic and a preview needs DELETE, decided by the KIP-11
authorizer through the API's authorization hook (alice is a super user here, bob has no binding)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from helpers.offsets import body, produce


async def _allow_bob(client: httpx.AsyncClient, alice: dict[str, str], operation: str) -> None:
    binding = {
        "principal": "User:bob",
        "operation": operation,
        "permission_type": "ALLOW",
        "resource_type": "TOPIC",
        "resource_name": "orders",
        "pattern_type": "LITERAL",
    }
    response = await client.post("/v1/clusters/demo/acls", json=binding, headers=alice)
    assert response.status_code == 201, response.text


async def test_topic_view_needs_describe_and_preview_needs_delete(
    app_client: httpx.AsyncClient,
    alice: dict[str, str],
    token: Callable[[str], Awaitable[str]],
    emulator: Any,
) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    await produce(emulator, "orders", {0: 3})
    bob = {"Authorization": f"Bearer {await token('bob')}"}
    view = "/v1/clusters/demo/topics/orders"
    preview = body({"topic": "orders", "partition": 0, "offset": 1}, dry_run=True)

    denied = await app_client.get(view, headers=bob)
    assert denied.status_code == 403, denied.text
    assert denied.json()["denied_operation"] == "DESCRIBE"
    assert (await app_client.post("/v1/deletions", json=preview, headers=bob)).status_code == 403

    await _allow_bob(app_client, alice, "DESCRIBE")
    assert (await app_client.get(view, headers=bob)).status_code == 200
    assert (await app_client.post("/v1/deletions", json=preview, headers=bob)).status_code == 403

    await _allow_bob(app_client, alice, "DELETE")
    assert (await app_client.post("/v1/deletions", json=preview, headers=bob)).status_code == 200
    denials = await app_client.get("/v1/audit", params={"action": "authz.denied"}, headers=alice)
    assert len(denials.json()["items"]) == 3
