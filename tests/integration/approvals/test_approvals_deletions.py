"""Four-eyes approval of deletions over HTTP, on both databases, the executor driven by hand against the
Kafka emulator: who may approve (never the requester, not even through a group they share with the
approver), how many, rejection, expiry, cancel, revoked rights, and that the frozen offsets are sent."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from helpers.approvals import TOPIC, Desk, assert_problem, make_settings
from helpers.authz import produce
from pydantic import SecretStr

from app.audit.checkpoints import generate_private_key
from app.certificates import key_set, verify_certificate
from app.services.approvals.expiry import expire_overdue
from app.settings import AuditSettings, ClusterSettings, Settings
from app.worker.approval_expiry import ApprovalExpiry


@pytest.fixture
def settings(migrated_url: str, clusters: dict[str, ClusterSettings]) -> Settings:
    signing = AuditSettings(signing_key=SecretStr(generate_private_key()))
    return make_settings(migrated_url, clusters).model_copy(update={"audit": signing})


async def pending_for(desk: Desk, who: str) -> list[str]:
    page = await desk.call(who, "GET", "/v1/approvals", 200, params={"status": "pending"})
    return [item["deletion_id"] for item in page["items"]]


async def assert_ended_unsent(desk: Desk, deletion_id: str, status: str) -> None:
    """The deletion ended with ``status``, its two partitions cancelled, and nothing was sent."""
    read = await desk.deletion(deletion_id)
    assert (read["status"], read["counts"]) == (status, {"cancelled": 2})
    assert read["finished_at"] is not None
    assert await desk.execute() == 0
    assert [desk.log_start(0), desk.log_start(1)] == [0, 0]


async def test_the_requester_never_approves_not_even_through_a_shared_group(desk: Desk) -> None:
    await desk.rule(approvers=["User:alice", "Group:privacy", "Group:officers"])
    accepted = await desk.request()
    deletion_id = accepted["id"]
    assert accepted["status"] == "awaiting_approval"
    assert accepted["counts"] == {"awaiting_approval": 2}
    assert await desk.execute() == 0  # nothing is claimed while it waits

    refused = await desk.decide("alice", deletion_id, "approve", 403)
    assert "own request" in refused["detail"]
    shared = await desk.decide("bob", deletion_id, "approve", 403)  # only through Group:privacy
    assert "group the requester also belongs to" in shared["detail"]
    assert await pending_for(desk, "alice") == []
    assert await pending_for(desk, "bob") == []
    assert await pending_for(desk, "carol") == [deletion_id]
    denied = await desk.audit("authz.denied")
    assert [(e["principal"], e["details"]["operation"]) for e in denied] == [
        ("User:alice", "APPROVE"),
        ("User:bob", "APPROVE"),
    ]

    approved = await desk.decide("carol", deletion_id, "approve")
    assert approved["status"] == "approved"
    assert approved["decisions"][0]["approved_as"] == ["Group:officers"]
    assert (await desk.deletion(deletion_id))["status"] == "approved"
    assert await desk.execute() == 2
    assert (await desk.deletion(deletion_id))["status"] == "succeeded"
    actions = [e["action"] for e in await desk.audit() if e["deletion_id"] == deletion_id]
    for action in (
        "deletion.requested",
        "deletion.awaiting_approval",
        "approval.recorded",
        "deletion.approved",
    ):
        assert action in actions, actions


async def test_two_approvals_each_principal_once_and_the_frozen_offsets_are_sent(desk: Desk) -> None:
    await desk.rule(required_approvals=2)
    accepted = await desk.request(offsets=(4, -1))
    deletion_id = accepted["id"]
    frozen = await desk.call("carol", "GET", f"/v1/deletions/{deletion_id}/approvals", 200)
    preview = {(p["topic"], p["partition"]): p for p in frozen["preview"]["partitions"]}
    assert {k: (p["resolved_offset"], p["records_deleted"]) for k, p in preview.items()} == {
        (TOPIC, 0): (4, 4),
        (TOPIC, 1): (10, 10),
    }
    # Records arriving while it waits are not deleted: the offsets resolved at the request are sent.
    from helpers.authz import produce

    await produce(desk.emulator.bootstrap, TOPIC, {1: 5})

    first = await desk.decide("carol", deletion_id, "approve")
    assert (first["status"], first["approvals"]) == ("pending", 1)
    assert_problem(
        await desk.client.post(
            f"/v1/deletions/{deletion_id}/approvals",
            json={"decision": "approve"},
            headers=await desk.headers("carol"),
        ),
        409,
    )
    assert await desk.execute() == 0
    assert [desk.log_start(0), desk.log_start(1)] == [0, 0]

    second = await desk.decide("dave", deletion_id, "approve")
    assert (second["status"], second["approvals"]) == ("approved", 2)
    assert await desk.execute() == 2
    partitions = (await desk.call("alice", "GET", f"/v1/deletions/{deletion_id}/partitions", 200))["items"]
    assert {p["partition"]: p["resolved_offset"] for p in partitions} == {0: 4, 1: 10}
    assert [desk.log_start(0), desk.log_start(1)] == [4, 10]
    (approved,) = await desk.audit("deletion.approved")
    assert approved["details"]["approvers"] == ["User:carol", "User:dave"]
    # The erasure certificate names both approvers, verified against the published keys.
    token = (
        await desk.client.get(f"/v1/deletions/{deletion_id}/certificate", headers=await desk.headers("alice"))
    ).text
    keys = key_set((await desk.client.get("/signing-keys")).json())
    certified = verify_certificate(token, keys).claims["deletion"]
    assert [a["principal"] for a in certified["approvers"]] == ["User:carol", "User:dave"]


async def test_a_rejection_ends_it_and_nothing_is_sent(desk: Desk) -> None:
    await desk.rule(required_approvals=2)
    deletion_id = (await desk.request())["id"]
    await desk.decide("carol", deletion_id, "approve")
    rejected = await desk.decide("dave", deletion_id, "reject")
    assert rejected["status"] == "rejected"
    await desk.decide("bob", deletion_id, "approve", 403)
    await assert_ended_unsent(desk, deletion_id, "rejected")
    (event,) = await desk.audit("deletion.rejected")
    assert (event["principal"], event["details"]["comment"]) == ("User:dave", "dave says reject")


async def test_an_unapproved_deletion_expires(desk: Desk) -> None:
    await desk.rule(expires_after_seconds=1)
    requested_at = datetime.now(UTC)
    deletion_id = (await desk.request())["id"]
    # Not overdue within its second (asked at the request's own time: a loaded machine may take longer).
    assert await expire_overdue(desk.runtime, requested_at + timedelta(seconds=0.5)) == 0
    await asyncio.sleep(1.1)
    await desk.decide("carol", deletion_id, "approve", 409)  # too late, even before the expiry ran
    assert await ApprovalExpiry(desk.runtime).run_once() == 1
    await assert_ended_unsent(desk, deletion_id, "expired")
    (event,) = await desk.audit("deletion.expired")
    assert event["deletion_id"] == deletion_id
    assert await pending_for(desk, "carol") == []
    assert await expire_overdue(desk.runtime, datetime.now(UTC) + timedelta(days=1)) == 0


async def test_cancel_while_waiting(desk: Desk) -> None:
    await desk.rule()
    deletion_id = (await desk.request())["id"]
    cancelled = await desk.call("alice", "POST", f"/v1/deletions/{deletion_id}/cancel", 200)
    assert (cancelled["status"], cancelled["counts"]) == ("cancelled", {"cancelled": 2})
    await desk.decide("carol", deletion_id, "approve", 409)
    read = await desk.call("carol", "GET", f"/v1/deletions/{deletion_id}/approvals", 200)
    assert read["status"] == "cancelled"
    assert await desk.execute() == 0


async def test_an_approver_whose_rights_were_revoked_cannot_approve(desk: Desk) -> None:
    await desk.rule(approvers=["Group:officers", "User:dave"])
    deletion_id = (await desk.request())["id"]
    await desk.revoke(principal="Group:officers", operation="DESCRIBE")
    refused = await desk.decide("carol", deletion_id, "approve", 403)
    assert refused["denied_operation"] == "DESCRIBE"
    # Taken off the rule: refused as well, even with the right to describe the topic.
    await desk.call(
        "admin", "PATCH", "/v1/clusters/demo/approval-rules/pii", 200, json={"approvers": ["User:carol"]}
    )
    await desk.grant(principal="User:dave", resource_name=TOPIC, operation="DESCRIBE")
    await desk.decide("dave", deletion_id, "approve", 403)
    assert (await desk.deletion(deletion_id))["status"] == "awaiting_approval"


async def test_the_requesters_revoked_right_still_fails_the_approved_deletion(desk: Desk) -> None:
    await desk.rule()
    deletion_id = (await desk.request())["id"]
    await desk.decide("carol", deletion_id, "approve")
    await desk.revoke(principal="User:alice", operation="DELETE")
    assert await desk.execute() == 2
    partitions = (await desk.call("admin", "GET", f"/v1/deletions/{deletion_id}/partitions", 200))["items"]
    assert {(p["status"], p["error_code"]) for p in partitions} == {("failed", "AUTHORIZATION_REVOKED")}
    assert [desk.log_start(0), desk.log_start(1)] == [0, 0]


async def test_an_unprotected_topic_needs_no_approval(desk: Desk) -> None:
    await desk.rule(topics={"prefix": "other-"})
    accepted = await desk.request()
    assert accepted["status"] == "pending"
    assert await desk.execute() == 2
    assert [desk.log_start(0), desk.log_start(1)] == [4, 6]


async def test_requests_stored_together_are_each_held_by_their_own_topics(desk: Desk) -> None:
    """Concurrent requests, each checked against the rules before it is planned, share the storing
    transactions: each protected one is held (stored once, awaiting approval), each other one is
    accepted."""
    await desk.rule()
    desk.emulator.create_topic("orders", partitions=1, replication_factor=1)
    await produce(desk.emulator.bootstrap, "orders", {0: 10})
    await desk.grant(principal="User:alice", resource_name="orders")
    bodies = [
        {
            "cluster": "demo",
            "partitions": [{"topic": TOPIC if i % 2 else "orders", "partition": 0, "offset": i}],
            "reason": f"request {i}",
        }
        for i in range(1, 9)
    ]
    accepted = await asyncio.gather(
        *(desk.call("alice", "POST", "/v1/deletions", 202, json=body) for body in bodies)
    )
    assert [(a["topics"], a["status"]) for a in accepted] == [
        ([TOPIC], "awaiting_approval") if i % 2 else (["orders"], "pending") for i in range(1, 9)
    ]
    held = {a["id"] for a in accepted if a["status"] == "awaiting_approval"}
    assert set(await pending_for(desk, "carol")) == held
    requested = [e["deletion_id"] for e in await desk.audit("deletion.requested")]
    assert sorted(requested) == sorted(a["id"] for a in accepted)  # each stored and audited once
    assert await desk.execute() == 4  # the four unprotected ones
    assert desk.log_start(0) == 0


async def test_a_protected_deletion_is_planned_once_with_its_preview(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rules are read before the request is planned: the cluster is asked for its plan and for the
    preview its approvers approve once, and nothing plans it again after a storing transaction."""
    await desk.rule()
    gateway = desk.runtime.gateway
    calls: Counter[str] = Counter()
    for name in ("topic_layouts", "list_groups", "log_start_offsets"):
        method = getattr(gateway, name)

        def counted(*args: Any, _name: str = name, _method: Any = method, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _method(*args, **kwargs)

        monkeypatch.setattr(gateway, name, counted)
    accepted = await desk.request()
    assert accepted["status"] == "awaiting_approval"
    assert calls == {"topic_layouts": 1, "list_groups": 1, "log_start_offsets": 1}
    assert [e["deletion_id"] for e in await desk.audit("deletion.requested")] == [accepted["id"]]


async def test_a_large_protected_deletion_is_held(desk: Desk) -> None:
    """1,000 concrete offsets, protected: held awaiting approval, every partition with it, nothing sent."""
    await desk.rule(topics={"names": ["wide"]})
    desk.emulator.create_topic("wide", partitions=1000, replication_factor=1)
    await desk.grant(principal="User:alice", resource_name="wide")
    await desk.grant(principal="Group:officers", resource_name="wide", operation="DESCRIBE")
    body = {
        "cluster": "demo",
        "partitions": [{"topic": "wide", "partition": p, "offset": 0} for p in range(1000)],
        "reason": "a wide erasure",
    }
    accepted = await desk.call("alice", "POST", "/v1/deletions", 202, json=body)
    assert (accepted["status"], accepted["counts"]) == ("awaiting_approval", {"awaiting_approval": 1000})
    assert await pending_for(desk, "carol") == [accepted["id"]]
    assert [e["deletion_id"] for e in await desk.audit("deletion.requested")] == [accepted["id"]]
    assert await desk.execute() == 0


async def test_webhooks_hear_each_step_of_an_approval(desk: Desk) -> None:
    await desk.rule(expires_after_seconds=3600)
    hook = {"cluster": "demo", "url": "http://hooks.invalid/hook"}
    webhook_id = (await desk.call("admin", "POST", "/v1/webhooks", 201, json=hook))["id"]
    approved = (await desk.request())["id"]
    rejected = (await desk.request(offsets=(1, 1)))["id"]
    expired = (await desk.request(offsets=(2, 2)))["id"]
    await desk.decide("carol", approved, "approve")
    await desk.decide("carol", rejected, "reject")
    # Two hours on, the one left undecided expires.
    assert await expire_overdue(desk.runtime, datetime.now(UTC) + timedelta(hours=2)) == 1
    assert await desk.execute() == 2
    page = await desk.call(
        "admin", "GET", f"/v1/webhooks/{webhook_id}/deliveries", 200, params={"limit": 100}
    )
    heard = sorted((d["deletion_id"], d["event_type"]) for d in page["items"])
    assert heard == sorted(
        [
            (approved, "deletion.awaiting_approval"),
            (approved, "deletion.approved"),
            (approved, "deletion.succeeded"),
            (rejected, "deletion.awaiting_approval"),
            (rejected, "deletion.rejected"),
            (expired, "deletion.awaiting_approval"),
            (expired, "deletion.expired"),
        ]
    )


async def test_a_deletion_no_rule_protects_has_no_approval_to_read_or_decide(desk: Desk) -> None:
    """409 for who sees the deletion (it exists, but needs no approval); 404 for anyone else and for a
    deletion that does not exist, so nothing is revealed."""
    deletion_id = (await desk.request())["id"]
    url = f"/v1/deletions/{deletion_id}/approvals"
    read = await desk.call("alice", "GET", url, 409)
    assert read["type"] == "/problems/approval-not-required"
    assert deletion_id in read["detail"]
    decided = await desk.decide("alice", deletion_id, "approve", 409)
    assert decided["type"] == "/problems/approval-not-required"
    await desk.call("carol", "GET", url, 409)  # an officer, with DESCRIBE on the topic
    await desk.revoke(principal="Group:officers", operation="DESCRIBE")
    await desk.call("carol", "GET", url, 404)  # may not see the deletion any more
    await desk.call("alice", "GET", "/v1/deletions/no-such-deletion/approvals", 404)
    assert await desk.audit("approval.recorded") == []
