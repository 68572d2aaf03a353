"""GET /v1/audit/export: every event as one NDJSON line, in chain order, hashes included."""

from __future__ import annotations

import json

import httpx
from helpers.retention import policy_body

from app.audit import chain_hash


async def test_export_streams_the_chain(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: object
) -> None:
    for index in range(3):
        created = await client.post(
            "/v1/clusters/demo/policies", json=policy_body(f"p{index}"), headers=alice
        )
        assert created.status_code == 201, created.text
    response = await client.get("/v1/audit/export", headers=alice)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    events = [json.loads(line) for line in response.text.splitlines()]
    assert [e["action"] for e in events] == ["policy.created"] * 3
    assert [e["details"]["policy"] for e in events] == ["p0", "p1", "p2"]
    previous = "0" * 64
    for event in events:
        content = {k: v for k, v in event.items() if k not in ("prev_hash", "hash")}
        assert event["prev_hash"] == previous
        assert chain_hash(previous, content) == event["hash"]
        previous = event["hash"]

    filtered = await client.get(
        "/v1/audit/export",
        params={"action": "policy.created", "until": events[1]["occurred_at"]},
        headers=alice,
    )
    assert filtered.status_code == 200, filtered.text
    assert [json.loads(line)["details"]["policy"] for line in filtered.text.splitlines()] == ["p0"], events
    assert (await client.get("/v1/audit/export")).status_code == 401
