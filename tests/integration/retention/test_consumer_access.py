"""Consumers are Kafka consumer groups for authorization (KIP-11): reporting progress or registering needs
READ on the group (and READ on the reported topics), seeing a consumer needs DESCRIBE on it. A stranger
can neither move a consumer's position (so a sweep never deletes what it has not read) nor see it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from helpers.kafka_records import produce
from helpers.retention import grant, policy_body, progress_body

from app.worker.scheduler import RetentionScheduler

BASE = "/v1/clusters/demo/consumers"
POLICIES = "/v1/clusters/demo/policies"
Headers = Callable[[str], Awaitable[dict[str, str]]]


async def positions(client: httpx.AsyncClient, headers: dict[str, str]) -> dict[int, int]:
    response = await client.get(f"{BASE}/enricher", headers=headers)
    assert response.status_code == 200, response.text
    return {p["partition"]: p["offset"] for p in response.json()["progress"]}


async def audit_actions(client: httpx.AsyncClient, alice: dict[str, str]) -> list[dict[str, Any]]:
    return list((await client.get("/v1/audit", headers=alice)).json()["items"])


async def test_a_stranger_cannot_report_progress_and_the_sweep_deletes_nothing_unread(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    headers_for: Headers,
    inter: str,
    emulator: Any,
    scheduler: RetentionScheduler,
) -> None:
    await produce(emulator, inter, {0: 10, 1: 10})
    url = f"{BASE}/enricher/progress"
    assert (await client.put(url, json=progress_body(1, {inter: {"0": 2, "1": 3}}), headers=alice)).is_success
    body = policy_body(topics={"names": [inter]}, consumers={"spark": ["enricher"]})
    assert (await client.post(POLICIES, json=body, headers=alice)).status_code == 201

    bob = await headers_for("bob")
    ahead = progress_body(999, {inter: {"0": 10, "1": 10}}, query_id="q-evil")
    refused = await client.put(url, json=ahead, headers=bob)
    assert refused.status_code == 403, refused.text
    assert refused.headers["content-type"].startswith("application/problem+json")
    # Nor can a stranger report for a consumer nobody registered yet (it would be registered as theirs).
    assert (await client.put(f"{BASE}/squatter/progress", json=ahead, headers=bob)).status_code == 403
    assert await positions(client, alice) == {0: 2, 1: 3}

    await scheduler.run_once()
    [run] = (await client.get(f"{POLICIES}/inter/runs", headers=alice)).json()["items"]
    deletion = (await client.get(f"/v1/deletions/{run['deletion_id']}", headers=alice)).json()
    assert {(p["partition"], p["resolved_offset"]) for p in deletion["partitions"]} == {(0, 2), (1, 3)}


async def test_reporting_needs_read_on_the_group_and_its_topics(
    client: httpx.AsyncClient, alice: dict[str, str], headers_for: Headers, inter: str
) -> None:
    url = f"{BASE}/enricher/progress"
    assert (await client.put(url, json=progress_body(1, {inter: {"0": 2}}), headers=alice)).is_success
    bob = await headers_for("bob")
    report = progress_body(0, {inter: {"0": 1}}, query_id="q-2")

    await grant(client, alice, "User:bob", "DESCRIBE", "GROUP:enricher")
    denied = await client.put(url, json=report, headers=bob)
    assert denied.status_code == 403, denied.text
    assert denied.json()["denied_resource_type"] == "GROUP"
    await grant(client, alice, "User:bob", "READ", "GROUP:enricher")
    denied = await client.put(url, json=report, headers=bob)
    assert (denied.status_code, denied.json()["denied_resources"]) == (403, [inter])
    assert [e["action"] for e in await audit_actions(client, alice)].count("authz.denied") == 2
    assert await positions(client, alice) == {0: 2}

    await grant(client, alice, "User:bob", "READ", f"TOPIC:{inter}")
    accepted = await client.put(url, json=report, headers=bob)
    assert accepted.status_code == 200, accepted.text
    # A new query may move a position back; it is audited with who reported it, from where.
    changed = [e for e in await audit_actions(client, alice) if e["action"] == "consumer.query_changed"]
    assert [(e["principal"], e["client_host"]) for e in changed] == [("User:bob", "127.0.0.1")]
    older = await client.put(url, json=progress_body(0, {inter: {"0": 0}}, query_id="q-2"), headers=bob)
    assert older.json()["ignored"] == 1
    assert await positions(client, alice) == {0: 1}


async def test_consumers_are_invisible_to_strangers(
    client: httpx.AsyncClient, alice: dict[str, str], headers_for: Headers, emulator: Any
) -> None:
    for name in ("enricher", "billing"):
        registered = await client.post(BASE, json={"name": name, "kind": "kafka_group"}, headers=alice)
        assert registered.status_code == 201, registered.text
    bob = await headers_for("bob")
    assert (await client.get(f"{BASE}/enricher", headers=bob)).status_code == 404
    assert (await client.get(BASE, headers=bob)).json()["items"] == []
    squat = await client.post(BASE, json={"name": "mine", "kind": "spark"}, headers=bob)
    assert squat.status_code == 403, squat.text
    assert (await client.get(f"{BASE}/mine", headers=alice)).status_code == 404

    # READ on a group implies DESCRIBE, as in Kafka.
    await grant(client, alice, "User:bob", "READ", "GROUP:billing")
    assert [c["name"] for c in (await client.get(BASE, headers=bob)).json()["items"]] == ["billing"]
    assert (await client.get(f"{BASE}/billing", headers=bob)).status_code == 200
    assert (await client.get(f"{BASE}/enricher", headers=bob)).status_code == 404
    await grant(client, alice, "User:bob", "READ", "GROUP:mine")
    assert (await client.post(BASE, json={"name": "mine", "kind": "spark"}, headers=bob)).status_code == 201
