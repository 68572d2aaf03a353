"""The requester's groups leave the approvers whatever token the requester asked with: those recorded when
they asked, and those their tokens reported before or since; when no token of theirs ever reported them,
nobody approves through a group (a listed user still does)."""

from __future__ import annotations

from typing import Any

from helpers.approvals import TOPIC, Desk, assert_problem

# alice and bob share the group privacy; carol is listed by name.
APPROVERS = ["Group:privacy", "User:carol"]


async def request_without_groups(desk: Desk) -> str:
    """alice asks with a valid token that carries no groups claim."""
    body = {
        "cluster": "demo",
        "partitions": [{"topic": TOPIC, "partition": 0, "offset": 4}],
        "reason": "erasure request 43",
    }
    response = await desk.client.post(
        "/v1/deletions", json=body, headers=desk.headers_without_groups("alice")
    )
    assert response.status_code == 202, response.text
    accepted: dict[str, Any] = response.json()
    assert accepted["status"] == "awaiting_approval"
    return str(accepted["id"])


async def test_a_co_member_cannot_approve_through_a_group_the_requesters_other_tokens_report(
    desk: Desk,
) -> None:
    await desk.rule(approvers=APPROVERS)
    await desk.call("alice", "GET", "/v1/approvals", 200)  # a token of alice's reports her group privacy
    deletion_id = await request_without_groups(desk)
    refused = await desk.decide("bob", deletion_id, "approve", 403)
    assert "also belongs to" in refused["detail"]
    assert (await desk.deletion(deletion_id))["status"] == "awaiting_approval"
    assert (await desk.decide("carol", deletion_id, "approve"))["status"] == "approved"


async def test_unknown_requester_groups_leave_only_listed_users_to_approve(desk: Desk) -> None:
    await desk.rule(approvers=APPROVERS)
    deletion_id = await request_without_groups(desk)  # no token of alice's ever reported her groups
    refused = await desk.decide("bob", deletion_id, "approve", 403)
    assert "groups are unknown" in refused["detail"]
    assert [i["deletion_id"] for i in (await desk.call("bob", "GET", "/v1/approvals", 200))["items"]] == []
    denied = [e for e in await desk.audit("authz.denied") if e["details"].get("operation") == "APPROVE"]
    assert [e["principal"] for e in denied] == ["User:bob"]
    assert (await desk.decide("carol", deletion_id, "approve"))["status"] == "approved"


async def test_groups_reported_after_the_request_leave_the_approvers_too(desk: Desk) -> None:
    await desk.rule(approvers=["Group:privacy"])
    deletion_id = await request_without_groups(desk)
    await desk.call("alice", "GET", "/v1/approvals", 200)  # alice's groups reported after she asked
    refused = await desk.decide("bob", deletion_id, "approve", 403)
    assert "also belongs to" in refused["detail"]
    assert_problem(
        await desk.client.post(
            f"/v1/deletions/{deletion_id}/approvals",
            json={"decision": "approve", "comment": "mine"},
            headers=desk.headers_without_groups("alice"),
        ),
        403,
    )
