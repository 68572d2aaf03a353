"""An approval rule covers retention unless an administrator exempts it: a policy over a protected topic
never deletes there without an approver, whether it was created after the rule, before it, or meets the
protected topic only at a sweep; an explicit exemption lets it run, audited and shown on the rule."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.approvals import RULES, TOPIC, Desk, desk_for
from helpers.authz import produce
from helpers.retention import commit

from app.settings import Settings
from app.worker.scheduler import RetentionScheduler

POLICIES = "/v1/clusters/demo/policies"
READER = "pii-reader"


@pytest.fixture
async def desk(settings: Settings, emulator: Any) -> AsyncIterator[Desk]:
    """alice may delete in customers-pii and in every secret- topic, and describe the group pii-reader,
    which read 6 and 4 records of customers-pii's partitions."""
    async with desk_for(settings, emulator) as opened:
        await opened.grant(principal="User:alice", resource_name="secret-", pattern_type="PREFIXED")
        await opened.grant(
            principal="User:alice", resource_name=READER, resource_type="GROUP", operation="DESCRIBE"
        )
        await commit(emulator, READER, {(TOPIC, 0): 6, (TOPIC, 1): 4})
        yield opened


def policy(name: str, topics: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "topics": topics, "consumers": {"groups": [READER]}}


async def sweep_and_send(desk: Desk, name: str) -> dict[str, Any]:
    """One scheduler pass, then one executor pass (whatever the sweep submitted is sent); the newest run."""
    await RetentionScheduler(desk.runtime, tick_seconds=0.05).run_once()
    await desk.execute()
    runs = await desk.call("admin", "GET", f"{POLICIES}/{name}/runs", 200)
    newest: dict[str, Any] = runs["items"][0]
    return newest


async def status_of(desk: Desk, name: str) -> Any:
    return (await desk.call("admin", "GET", f"{POLICIES}/{name}", 200))["approval_status"]


async def test_the_requester_alone_cannot_delete_through_a_policy_under_a_default_rule(desk: Desk) -> None:
    await desk.rule()  # the rule as created with defaults: no exemption
    created = await desk.call("alice", "POST", POLICIES, 201, json=policy("trim", {"names": [TOPIC]}))
    assert created["approval_status"] == "pending"
    run = await sweep_and_send(desk, "trim")
    assert (run["status"], run["skip_counts"]) == ("waiting", {"awaiting_approval": 2})
    assert (desk.log_start(0), desk.log_start(1)) == (0, 0)


async def test_a_policy_created_before_the_rule_is_held_when_the_rule_is_created(desk: Desk) -> None:
    created = await desk.call("alice", "POST", POLICIES, 201, json=policy("trim", {"names": [TOPIC]}))
    assert created["approval_status"] is None
    await desk.rule()
    assert await status_of(desk, "trim") == "pending"
    held = [e for e in await desk.audit("policy.awaiting_approval") if e["details"]["policy"] == "trim"]
    assert [(e["principal"], e["details"]["rules"]) for e in held] == [("User:admin", ["pii"])]
    run = await sweep_and_send(desk, "trim")
    assert run["status"] == "waiting"
    assert (desk.log_start(0), desk.log_start(1)) == (0, 0)
    listed = await desk.call("carol", "GET", "/v1/approvals", 200)
    assert [(i["policy"], i["requester"]) for i in listed["items"]] == [("trim", "User:alice")]


async def test_a_prefix_policy_meeting_a_new_protected_topic_at_a_sweep_is_held(
    desk: Desk, emulator: Any
) -> None:
    await desk.rule(name="secrets", topics={"prefix": "secret-"})
    created = await desk.call("alice", "POST", POLICIES, 201, json=policy("secrets", {"prefix": "secret-"}))
    assert created["approval_status"] is None  # no secret- topic yet: nothing protected to approve
    emulator.create_topic("secret-a", partitions=1, replication_factor=1)
    await produce(emulator.bootstrap, "secret-a", {0: 10})
    await commit(emulator, READER, {("secret-a", 0): 7})

    run = await sweep_and_send(desk, "secrets")
    assert (run["status"], run["skip_counts"]) == ("waiting", {"awaiting_approval": 1})
    assert emulator.state()["topics"]["secret-a"]["partitions"][0]["low_watermark"] == 0
    assert await status_of(desk, "secrets") == "pending"
    [held] = [e for e in await desk.audit("policy.awaiting_approval") if e["details"]["policy"] == "secrets"]
    assert (held["principal"], held["details"]["topics"]) == ("User:alice", ["secret-a"])


async def test_an_explicit_exemption_lets_the_policy_run_audited_and_shown(desk: Desk) -> None:
    await desk.rule()
    await desk.call("alice", "POST", POLICIES, 201, json=policy("trim", {"names": [TOPIC]}))
    exempted = await desk.call("admin", "PATCH", f"{RULES}/pii", 200, json={"exemptions": ["retention"]})
    assert exempted["exemptions"] == ["retention"]
    assert (await desk.call("admin", "GET", RULES, 200))["items"][0]["exemptions"] == ["retention"]
    [granted] = await desk.audit("approval_rule.exempted")
    assert (granted["principal"], granted["details"]["granted"]) == ("User:admin", ["retention"])
    # The exemption releases the policy held by the rule: its sweeps delete up to what the group read.
    assert await status_of(desk, "trim") is None
    run = await sweep_and_send(desk, "trim")
    assert run["status"] == "submitted"
    assert (desk.log_start(0), desk.log_start(1)) == (6, 4)
