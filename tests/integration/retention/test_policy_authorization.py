"""Creating a policy needs DELETE on the topics it covers and DESCRIBE on its consumers, decided by the
KIP-11 authorizer: a prefix policy needs a PREFIXED binding on the prefix; sweeps run as the owner and
skip the topics it may no longer DELETE on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from helpers.kafka_records import produce
from helpers.retention import commit, grant, policy_body

from app.worker.scheduler import RetentionScheduler

POLICIES = "/v1/clusters/demo/policies"


async def allow_bob(client: httpx.AsyncClient, alice: dict[str, str], name: str, pattern: str) -> None:
    await grant(client, alice, "User:bob", "DELETE", f"TOPIC:{name}", pattern=pattern)


async def let_bob_describe_groups(client: httpx.AsyncClient, alice: dict[str, str]) -> None:
    for group in ("billing", "enricher"):
        await grant(client, alice, "User:bob", "DESCRIBE", f"GROUP:{group}")


async def test_prefix_policies_need_a_prefixed_binding(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    headers_for: Callable[[str], Awaitable[dict[str, str]]],
    inter: str,
) -> None:
    bob = await headers_for("bob")
    await let_bob_describe_groups(client, alice)
    assert (await client.post(POLICIES, json=policy_body(), headers=bob)).status_code == 403

    await allow_bob(client, alice, inter, "LITERAL")
    assert (await client.post(POLICIES, json=policy_body(), headers=bob)).status_code == 403
    names = policy_body("literal", topics={"names": [inter]})
    assert (await client.post(POLICIES, json=names, headers=bob)).status_code == 201

    await allow_bob(client, alice, "inter.", "PREFIXED")
    created = await client.post(POLICIES, json=policy_body(), headers=bob)
    assert created.status_code == 201, created.text
    assert created.json()["owner"] == "User:bob"


async def test_sweeps_are_reauthorized_as_the_owner(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    headers_for: Callable[[str], Awaitable[dict[str, str]]],
    inter: str,
    emulator: Any,
    scheduler: RetentionScheduler,
) -> None:
    bob = await headers_for("bob")
    await let_bob_describe_groups(client, alice)
    await allow_bob(client, alice, "inter.", "PREFIXED")
    body = policy_body(consumers={"groups": ["billing"]})
    assert (await client.post(POLICIES, json=body, headers=bob)).status_code == 201
    removed = await client.delete("/v1/clusters/demo/acls", params={"principal": "User:bob"}, headers=alice)
    assert removed.status_code == 200, removed.text

    await produce(emulator, inter, {0: 5, 1: 5})
    await commit(emulator, "billing", {(inter, 0): 5, (inter, 1): 5})
    await scheduler.run_once()
    [run] = (await client.get(f"{POLICIES}/inter/runs", headers=alice)).json()["items"]
    assert (run["status"], run["deletion_id"], run["partitions_planned"]) == ("denied", None, 0)
    assert run["skip_counts"] == {"owner_not_authorized": 2}
    assert "User:bob" in run["error"]
    actions = [e["action"] for e in (await client.get("/v1/audit", headers=alice)).json()["items"]]
    assert actions[-2:] == ["authz.denied", "policy.swept"]


async def test_a_prefix_policy_needs_the_whole_prefix(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    headers_for: Callable[[str], Awaitable[dict[str, str]]],
    inter: str,
) -> None:
    bob = await headers_for("bob")
    await let_bob_describe_groups(client, alice)
    # A LITERAL binding on a topic named like the prefix covers that one name, not the topics under it.
    await allow_bob(client, alice, "inter.", "LITERAL")
    assert (await client.post(POLICIES, json=policy_body(), headers=bob)).status_code == 403

    await allow_bob(client, alice, "inter.", "PREFIXED")
    # A topic under legal hold below the prefix: the policy would cover it, so it is refused.
    hold = {
        "principal": "User:*",
        "operation": "DELETE",
        "permission_type": "DENY",
        "resource_type": "TOPIC",
        "resource_name": "inter.hold",
        "pattern_type": "LITERAL",
    }
    assert (await client.post("/v1/clusters/demo/acls", json=hold, headers=alice)).status_code == 201
    refused = await client.post(POLICIES, json=policy_body(), headers=bob)
    assert refused.status_code == 403
    assert "inter." in refused.json()["detail"]
