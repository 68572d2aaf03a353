"""Who may see, change and delete a policy: its owner, DESCRIBE on CLUSTER to see it, ALTER on CLUSTER to
manage someone else's. A regex matching no topic now asks for nothing on topics, so consumers' DESCRIBE
and ownership are what stop a stranger; PATCH never transfers ownership."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from helpers.kafka_records import produce
from helpers.retention import commit, grant, policy_body

from app.worker.scheduler import RetentionScheduler

POLICIES = "/v1/clusters/demo/policies"
GHOST = policy_body("ghost", topics={"regex": r"ghost\..*"}, consumers={"groups": ["billing"]})
Headers = Callable[[str], Awaitable[dict[str, str]]]


async def test_a_stranger_cannot_create_change_or_delete_a_policy_matching_no_topic(
    client: httpx.AsyncClient, alice: dict[str, str], headers_for: Headers, inter: str
) -> None:
    assert (await client.post(POLICIES, json=GHOST, headers=alice)).status_code == 201
    bob = await headers_for("bob")
    created = await client.post(POLICIES, json=GHOST | {"name": "mine"}, headers=bob)
    assert created.status_code == 403, created.text
    assert created.json()["denied_resource_type"] == "GROUP"
    patched = await client.patch(f"{POLICIES}/ghost", json={"min_records": 0}, headers=bob)
    assert patched.status_code == 404, patched.text
    assert (await client.delete(f"{POLICIES}/ghost", headers=bob)).status_code == 404
    assert (await client.get(f"{POLICIES}/ghost", headers=bob)).status_code == 404
    assert (await client.get(f"{POLICIES}/ghost/runs", headers=bob)).status_code == 404
    assert (await client.get(POLICIES, headers=bob)).json()["items"] == []
    policy = (await client.get(f"{POLICIES}/ghost", headers=alice)).json()
    assert (policy["owner"], policy["min_records"]) == ("User:alice", 1)


async def test_describe_on_cluster_sees_but_does_not_manage(
    client: httpx.AsyncClient, alice: dict[str, str], headers_for: Headers, inter: str
) -> None:
    assert (await client.post(POLICIES, json=GHOST, headers=alice)).status_code == 201
    bob = await headers_for("bob")
    await grant(client, alice, "User:bob", "DESCRIBE", "CLUSTER:kafka-cluster")
    assert [p["name"] for p in (await client.get(POLICIES, headers=bob)).json()["items"]] == ["ghost"]
    assert (await client.get(f"{POLICIES}/ghost/runs", headers=bob)).status_code == 200
    refused = await client.patch(f"{POLICIES}/ghost", json={"enabled": False}, headers=bob)
    assert (refused.status_code, refused.json()["denied_operation"]) == (403, "ALTER")
    assert (await client.delete(f"{POLICIES}/ghost", headers=bob)).status_code == 403
    actions = [e["action"] for e in (await client.get("/v1/audit", headers=alice)).json()["items"]]
    assert actions.count("authz.denied") == 2


async def test_an_admin_change_keeps_the_owner(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    headers_for: Headers,
    inter: str,
    emulator: Any,
    scheduler: RetentionScheduler,
) -> None:
    bob = await headers_for("bob")
    await grant(client, alice, "User:bob", "DESCRIBE", "GROUP:billing")
    await grant(client, alice, "User:bob", "DELETE", f"TOPIC:{inter}")
    own = policy_body(topics={"names": [inter]}, consumers={"groups": ["billing"]})
    assert (await client.post(POLICIES, json=own, headers=bob)).status_code == 201
    assert [p["name"] for p in (await client.get(POLICIES, headers=bob)).json()["items"]] == ["inter"]

    # alice (a super user, so ALTER on CLUSTER) widens it to a topic bob may not delete in.
    emulator.create_topic("inter.b", 1)
    change = {"topics": {"names": [inter, "inter.b"]}, "min_records": 1}
    patched = await client.patch(f"{POLICIES}/inter", json=change, headers=alice)
    assert patched.status_code == 200, patched.text
    assert patched.json()["owner"] == "User:bob"

    # The sweep runs as bob: inter.b is skipped with the reason, inter.a is still swept.
    await produce(emulator, inter, {0: 5, 1: 5})
    await produce(emulator, "inter.b", {0: 5})
    await commit(emulator, "billing", {(inter, 0): 5, (inter, 1): 5, ("inter.b", 0): 5})
    await scheduler.run_once()
    [run] = (await client.get(f"{POLICIES}/inter/runs", headers=bob)).json()["items"]
    assert (run["status"], run["partitions_planned"]) == ("submitted", 2)
    assert run["skip_counts"] == {"owner_not_authorized": 1}
    assert run["skipped"][0]["topic"] == "inter.b"
    assert "User:bob" in run["skipped"][0]["detail"]

    assert (await client.delete(f"{POLICIES}/inter", headers=alice)).status_code == 204
