"""Approval rules over HTTP: create, list, read, change, delete, each audited; bad input is a 422 problem,
a duplicate name a 409, an unknown cluster or rule a 404 (both databases)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.approvals import RULES, TOPIC, Desk, assert_problem


async def test_a_rule_is_created_read_changed_and_deleted_with_audit(desk: Desk) -> None:
    approvers = ["User:carol", "Group:officers", "User:carol"]
    created = await desk.rule(approvers=approvers, required_approvals=2)
    assert created["approvers"] == ["Group:officers", "User:carol"]
    assert created["exemptions"] == []  # every way of deleting is covered unless exempted
    assert (created["topics"], created["required_approvals"], created["created_by"]) == (
        {"names": [TOPIC]},
        2,
        "User:admin",
    )
    assert created["expires_after_seconds"] == 86400
    listed = await desk.call("admin", "GET", RULES, 200)
    assert [r["name"] for r in listed["items"]] == ["pii"]
    wider = {"topics": {"prefix": "customers-"}}
    changed = await desk.call("admin", "PATCH", f"{RULES}/pii", 200, json=wider)
    assert (changed["topics"], changed["required_approvals"]) == ({"prefix": "customers-"}, 2)
    await desk.call("admin", "DELETE", f"{RULES}/pii", 204)
    assert_problem(await desk.client.get(f"{RULES}/pii", headers=await desk.headers("admin")), 404)
    actions = [e["action"] for e in await desk.audit() if e["action"].startswith("approval_rule.")]
    assert actions == ["approval_rule.created", "approval_rule.updated", "approval_rule.deleted"]


@pytest.mark.parametrize(
    "body",
    [
        {"name": "r", "topics": {"names": [TOPIC]}, "approvers": ["User:carol"], "required_approvals": 6},
        {"name": "r", "topics": {"names": [TOPIC]}, "approvers": ["User:carol"], "required_approvals": 0},
        {"name": "r", "topics": {"names": [TOPIC]}, "approvers": ["carol"]},
        {"name": "r", "topics": {"names": [TOPIC]}, "approvers": []},
        {"name": "r", "topics": {"prefix": "a", "names": [TOPIC]}, "approvers": ["User:carol"]},
        {"name": "r", "topics": {"regex": "(a)\\1"}, "approvers": ["User:carol"]},
        {"name": "r", "topics": {"names": [TOPIC]}, "approvers": ["User:carol"], "expires_after_seconds": 0},
        {"name": "bad name", "topics": {"names": [TOPIC]}, "approvers": ["User:carol"]},
        {"name": "r", "topics": {"names": [TOPIC]}, "approvers": ["User:carol"], "exemptions": ["direct"]},
        {"name": "r", "topics": {"names": [TOPIC]}, "approvers": ["User:carol"], "exemptions": "retention"},
        {
            "name": "r",
            "topics": {"names": [TOPIC]},
            "approvers": ["User:carol"],
            "applies_to_retention": False,
        },
    ],
)
async def test_bad_rules_are_refused(desk: Desk, body: dict[str, Any]) -> None:
    response = await desk.client.post(RULES, json=body, headers=await desk.headers("admin"))
    assert_problem(response, 422)


async def test_duplicates_unknown_clusters_and_rights(desk: Desk) -> None:
    await desk.rule()
    duplicate = {"name": "pii", "topics": {"names": [TOPIC]}, "approvers": ["User:carol"]}
    assert_problem(await desk.client.post(RULES, json=duplicate, headers=await desk.headers("admin")), 409)
    unknown = "/v1/clusters/nope/approval-rules"
    assert_problem(await desk.client.get(unknown, headers=await desk.headers("admin")), 404)
    carol = await desk.headers("carol")
    refused = await desk.client.post(RULES, json={**duplicate, "name": "x"}, headers=carol)
    assert assert_problem(refused, 403)["denied_operation"] == "ALTER"
    assert_problem(await desk.client.get(RULES, headers=await desk.headers("carol")), 403)
