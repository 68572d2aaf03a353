"""A retention policy over topics an approval rule protects (every rule not exempted from retention) waits
for approval when created or widened; its sweeps skip everything until approved, then run unattended."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.approvals import TOPIC, Desk, desk_for
from helpers.authz import produce

from app.settings import Settings
from app.worker.scheduler import RetentionScheduler

POLICIES = "/v1/clusters/demo/policies"


@pytest.fixture
async def desk(settings: Settings, emulator: Any) -> AsyncIterator[Desk]:
    async with desk_for(settings, emulator) as opened:
        emulator.create_topic("orders", partitions=1, replication_factor=1)
        await produce(emulator.bootstrap, "orders", {0: 10})
        await opened.grant(principal="User:alice", resource_name="orders")
        await opened.grant(
            principal="User:alice", resource_name="pii-reader", resource_type="GROUP", operation="DESCRIBE"
        )
        yield opened


def policy(name: str, *topics: str) -> dict[str, Any]:
    return {"name": name, "topics": {"names": list(topics)}, "consumers": {"groups": ["pii-reader"]}}


async def sweep(desk: Desk, name: str) -> dict[str, Any]:
    """One scheduler pass; the policy's newest run."""
    await RetentionScheduler(desk.runtime, tick_seconds=0.05).run_once()
    runs = await desk.call("alice", "GET", f"{POLICIES}/{name}/runs", 200)
    newest: dict[str, Any] = runs["items"][0]
    return newest


async def decide(desk: Desk, who: str, name: str, decision: str, status: int = 200) -> Any:
    response = await desk.client.post(
        f"{POLICIES}/{name}/approvals",
        json={"decision": decision, "comment": "ok"},
        headers=await desk.headers(who),
    )
    assert response.status_code == status, response.text
    return response.json()


async def test_a_protected_policy_waits_for_approval_then_sweeps_unattended(desk: Desk) -> None:
    await desk.rule()
    created = await desk.call("alice", "POST", POLICIES, 201, json=policy("pii-trim", TOPIC))
    assert created["approval_status"] == "pending"
    run = await sweep(desk, "pii-trim")
    assert run["status"] == "waiting"
    assert run["skip_counts"] == {"awaiting_approval": 2}
    assert "awaits four-eyes approval" in run["warnings"][0]

    await decide(desk, "alice", "pii-trim", "approve", 403)  # the owner asked: never their own approval
    listed = await desk.call("carol", "GET", "/v1/approvals", 200)
    assert [(i["subject_kind"], i["policy"]) for i in listed["items"]] == [("policy", "pii-trim")]
    approved = await decide(desk, "carol", "pii-trim", "approve")
    assert approved["status"] == "approved"
    assert (await desk.call("alice", "GET", f"{POLICIES}/pii-trim", 200))["approval_status"] is None
    run = await sweep(desk, "pii-trim")
    assert run["status"] != "waiting"
    assert "awaiting_approval" not in run["skip_counts"]
    events = [e["action"] for e in await desk.audit() if e["action"].startswith("policy.")]
    assert {"policy.created", "policy.awaiting_approval", "policy.approved"} <= set(events)


async def test_widening_asks_again_and_an_unprotected_policy_never_waits(desk: Desk) -> None:
    await desk.rule()
    created = await desk.call("alice", "POST", POLICIES, 201, json=policy("trim", "orders"))
    assert created["approval_status"] is None
    widened = await desk.call(
        "alice", "PATCH", f"{POLICIES}/trim", 200, json={"topics": {"names": ["orders", TOPIC]}}
    )
    assert widened["approval_status"] == "pending"
    rejected = await decide(desk, "dave", "trim", "reject")
    assert rejected["status"] == "rejected"
    assert (await desk.call("alice", "GET", f"{POLICIES}/trim", 200))["approval_status"] == "rejected"
    run = await sweep(desk, "trim")
    assert run["status"] == "waiting"
    assert "rejected" in run["warnings"][0]
    narrowed = await desk.call(
        "alice", "PATCH", f"{POLICIES}/trim", 200, json={"topics": {"names": ["orders"]}}
    )
    assert narrowed["approval_status"] is None


async def test_a_rule_exempted_from_retention_leaves_policies_alone(desk: Desk) -> None:
    await desk.rule(exemptions=["retention"])
    created = await desk.call("alice", "POST", POLICIES, 201, json=policy("pii-trim", TOPIC))
    assert created["approval_status"] is None


async def test_deleting_a_waiting_policy_ends_its_request(desk: Desk) -> None:
    await desk.rule()
    await desk.call("alice", "POST", POLICIES, 201, json=policy("pii-trim", TOPIC))
    assert len((await desk.call("carol", "GET", "/v1/approvals", 200))["items"]) == 1
    await desk.call("alice", "DELETE", f"{POLICIES}/pii-trim", 204)
    assert (await desk.call("carol", "GET", "/v1/approvals", 200))["items"] == []
    await decide(desk, "carol", "pii-trim", "approve", 404)


async def test_a_policy_no_rule_protects_has_no_approval_to_decide(desk: Desk) -> None:
    await desk.call("alice", "POST", POLICIES, 201, json=policy("open-trim", TOPIC))
    problem = await decide(desk, "alice", "open-trim", "approve", 409)
    assert problem["type"] == "/problems/approval-not-required"
    assert (await decide(desk, "alice", "absent", "approve", 404))["type"] == "/problems/not-found"
