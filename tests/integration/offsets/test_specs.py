"""Offset specs resolve at accept time as specified: offset, before (incl. no record at/after the time),
committed_by (fail closed without a commit), to=end, and whole-topic entries."""

from __future__ import annotations

from typing import Any

import httpx
from helpers.offsets import BASE_MS, body, commit, produce, produce_timed

PROBLEM = "application/problem+json"


async def _accept(
    client: httpx.AsyncClient, headers: dict[str, str], request: dict[str, Any]
) -> dict[str, Any]:
    response = await client.post("/v1/deletions", json=request, headers=headers)
    assert response.status_code == 202, response.text
    return {(p["topic"], p["partition"]): p for p in response.json()["partitions"]}


async def test_every_spec_resolves_at_accept_time(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("events", partitions=4, replication_factor=3)
    emulator.create_topic("logs", partitions=2, replication_factor=3)
    await produce_timed(emulator, "events", 0, [BASE_MS + i * 1000 for i in range(10)])
    await produce(emulator, "events", {1: 5, 2: 7, 3: 3})
    await produce(emulator, "logs", {0: 4, 1: 6})
    await commit(emulator, "billing", {("events", 2): 6})
    await commit(emulator, "audit", {("events", 2): 4})
    request = body(
        {"topic": "events", "partition": 0, "before": "2023-11-14T22:13:25Z"},  # BASE + 5 s
        {"topic": "events", "partition": 1, "before": BASE_MS + 3_600_000},  # no record at/after
        {"topic": "events", "partition": 2, "committed_by": ["billing", "audit"]},
        {"topic": "events", "partition": 3, "offset": 2},
        {"topic": "logs", "to": "end"},
    )
    got = await _accept(app_client, alice, request)
    assert {tp: p["resolved_offset"] for tp, p in got.items()} == {
        ("events", 0): 5,
        ("events", 1): 5,
        ("events", 2): 4,
        ("events", 3): 2,
        ("logs", 0): 4,
        ("logs", 1): 6,
    }
    assert got[("events", 0)]["spec"] == {"before_ms": BASE_MS + 5000, "before": "2023-11-14T22:13:25Z"}
    assert got[("events", 2)]["spec"] == {"committed_by": ["billing", "audit"]}
    assert got[("logs", 1)]["spec"] == {"to": "end", "all_partitions": True}
    deletion_id = (await app_client.get("/v1/deletions", headers=alice)).json()["items"][0]["id"]
    stored = (await app_client.get(f"/v1/deletions/{deletion_id}", headers=alice)).json()
    assert {(p["topic"], p["partition"]): p["spec"] for p in stored["partitions"]}[("events", 3)] == {
        "offset": 2
    }
    # The audit trail has every accepted partition with its offsets and spec (column by column).
    audit = await app_client.get("/v1/audit", params={"action": "deletion.requested"}, headers=alice)
    [requested] = audit.json()["items"]
    columns, specs = requested["details"]["partitions"], requested["details"]["specs"]
    keys = ("topic", "partition", "requested_offset", "resolved_offset", "spec")
    rows = zip(*(columns[k] for k in keys), strict=True)
    assert {(t, n): (asked, cut, specs[s]) for t, n, asked, cut, s in rows} == {
        tp: (p["requested_offset"], p["resolved_offset"], p["spec"]) for tp, p in got.items()
    }
    assert len(specs) == 5


async def test_group_without_commit_fails_closed(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("events", partitions=2, replication_factor=3)
    await produce(emulator, "events", {0: 5, 1: 5})
    await commit(emulator, "billing", {("events", 0): 3})
    request = body({"topic": "events", "committed_by": ["billing"]})
    response = await app_client.post("/v1/deletions", json=request, headers=alice)
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == PROBLEM
    problem = response.json()
    assert problem["errors"] == [
        {"pointer": "#/partitions/0", "detail": "group(s) billing have no committed offset on events-1"}
    ]
    assert (await app_client.get("/v1/deletions", headers=alice)).json()["items"] == []


async def test_entries_need_exactly_one_spec_and_no_overlap(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("events", partitions=2, replication_factor=3)
    for entry in (
        {"topic": "events", "partition": 0},
        {"topic": "events", "partition": 0, "offset": 1, "to": "end"},
        {"topic": "events", "partition": 0, "before": "2026-11-20T00:00:00"},  # no offset: never guessed
        {"topic": "events", "partition": 0, "committed_by": []},
        {"topic": "events", "partition": 0, "to": "start"},
    ):
        response = await app_client.post("/v1/deletions", json=body(entry), headers=alice)
        assert response.status_code == 422, (entry, response.text)
    overlap = body({"topic": "events", "to": "end"}, {"topic": "events", "partition": 1, "offset": 0})
    response = await app_client.post("/v1/deletions", json=overlap, headers=alice)
    assert response.status_code == 422
    assert response.json()["errors"] == [
        {"pointer": "#/partitions/1", "detail": "events-1 is also named by entry 0"}
    ]


async def test_plain_offsets_work_as_before(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("events", partitions=2, replication_factor=3)
    await produce(emulator, "events", {0: 5, 1: 8})
    got = await _accept(
        app_client,
        alice,
        body(
            {"topic": "events", "partition": 0, "offset": 3},
            {"topic": "events", "partition": 1, "offset": -1},
        ),
    )
    assert [(p["requested_offset"], p["resolved_offset"]) for p in got.values()] == [(3, 3), (-1, 8)]
