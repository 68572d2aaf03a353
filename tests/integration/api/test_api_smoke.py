"""End to end in one process: submit over HTTP, the executor deletes, the audit trail verifies."""

from __future__ import annotations

from typing import Any

import httpx
from helpers.api import deletion_body, wait_until


async def test_submit_follow_to_succeeded_and_verify_audit(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str
) -> None:
    response = await app_client.post(
        "/v1/deletions", json=deletion_body((orders, 0, 5), (orders, 1, -1)), headers=alice
    )
    assert response.status_code == 202, response.text
    body = response.json()
    assert response.headers["location"] == f"/v1/deletions/{body['id']}"
    offsets = {p["partition"]: (p["requested_offset"], p["resolved_offset"]) for p in body["partitions"]}
    assert offsets == {0: (5, 5), 1: (-1, 20)}

    async def finished() -> dict[str, Any] | None:
        read = (await app_client.get(response.headers["location"], headers=alice)).json()
        return read if read["status"] == "succeeded" else None

    read = await wait_until(finished)
    assert read["counts"] == {"succeeded": 2}
    assert {p["partition"]: p["low_watermark"] for p in read["partitions"]} == {0: 5, 1: 20}
    assert read["finished_at"] is not None
    verify = (await app_client.get("/v1/audit/verify", headers=alice)).json()
    assert verify["ok"] is True
    assert verify["checked"] >= 2
