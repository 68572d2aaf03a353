"""Consumers and Spark progress reports over HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import httpx
from helpers.retention import progress_body

BASE = "/v1/clusters/demo/consumers"


async def positions(
    client: httpx.AsyncClient, headers: dict[str, str], name: str
) -> dict[tuple[str, int], int]:
    response = await client.get(f"{BASE}/{name}", headers=headers)
    assert response.status_code == 200, response.text
    return {(p["topic"], p["partition"]): p["offset"] for p in response.json()["progress"]}


async def test_register_list_and_read(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: object, checkpoint_root: Path
) -> None:
    location = str(checkpoint_root / "enricher")
    body = {"name": "enricher", "kind": "spark", "checkpoint_location": location}
    created = await client.post(BASE, json=body, headers=alice)
    assert created.status_code == 201, created.text
    assert created.json()["owner"] == "User:alice"
    assert (await client.post(BASE, json=body, headers=alice)).status_code == 409
    listed = await client.get(BASE, headers=alice)
    assert [c["name"] for c in listed.json()["items"]] == ["enricher"]
    assert (await client.get(f"{BASE}/absent", headers=alice)).status_code == 404
    assert (await client.get("/v1/clusters/nowhere/consumers", headers=alice)).status_code == 404
    assert (await client.get(BASE)).status_code == 401


async def test_invalid_consumers_are_refused(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: object
) -> None:
    for body in (
        {"name": "g", "kind": "kafka_group", "checkpoint_location": "/x"},
        {"name": "spark-kafka-source-1-driver-0", "kind": "kafka_group"},
        {"name": "has space", "kind": "spark"},
        {"name": "x", "kind": "flink"},
    ):
        assert (await client.post(BASE, json=body, headers=alice)).status_code == 422, body


async def test_progress_moves_forward_only_and_is_idempotent(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: object
) -> None:
    url = f"{BASE}/enricher/progress"
    first = await client.put(url, json=progress_body(3, {"inter.a": {"0": 30, "1": 10}}), headers=alice)
    assert first.status_code == 200, first.text
    assert first.json() == {"consumer": "enricher", "applied": 2, "ignored": 0}

    again = await client.put(url, json=progress_body(3, {"inter.a": {"0": 99, "1": 99}}), headers=alice)
    assert again.json()["ignored"] == 2
    older = await client.put(url, json=progress_body(2, {"inter.a": {"0": 20}}), headers=alice)
    assert older.json()["ignored"] == 1
    newer = await client.put(url, json=progress_body(4, {"inter.a": {"0": 40}}), headers=alice)
    assert newer.json()["applied"] == 1
    assert await positions(client, alice, "enricher") == {("inter.a", 0): 40, ("inter.a", 1): 10}

    # A new query (new checkpoint) starts over: its positions replace the old ones, even lower.
    restarted = await client.put(
        url, json=progress_body(0, {"inter.a": {"0": 5}}, query_id="q-2"), headers=alice
    )
    assert restarted.json()["applied"] == 1
    assert await positions(client, alice, "enricher") == {("inter.a", 0): 5, ("inter.a", 1): 10}
    audit = await client.get("/v1/audit", headers=alice)
    actions = [e["action"] for e in audit.json()["items"]]
    assert actions.count("consumer.registered") == 1
    assert actions.count("consumer.query_changed") == 1


async def test_progress_is_validated(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: object
) -> None:
    url = f"{BASE}/enricher/progress"
    for offsets in (
        {},
        {"inter.a": {"x": 1}},
        {"inter.a": {"0": -1}},
        {"bad topic": {"0": 1}},
        {"t": {"01": 1}},
    ):
        response = await client.put(url, json=progress_body(1, offsets), headers=alice)  # type: ignore[arg-type]
        assert response.status_code == 422, offsets
    body = progress_body(1, {"t": {"0": 1}})
    body["batch_id"] = "1"
    assert (await client.put(url, json=body, headers=alice)).status_code == 422


async def test_kafka_group_consumers_take_no_progress(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: object
) -> None:
    assert (
        await client.post(BASE, json={"name": "billing", "kind": "kafka_group"}, headers=alice)
    ).status_code == 201
    response = await client.put(
        f"{BASE}/billing/progress", json=progress_body(1, {"t": {"0": 1}}), headers=alice
    )
    assert response.status_code == 409
