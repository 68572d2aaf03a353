"""Retention policies over HTTP: validation, create/read/update/delete, audit."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from helpers.retention import policy_body

BASE = "/v1/clusters/demo/policies"


async def test_policy_lifecycle(client: httpx.AsyncClient, alice: dict[str, str], inter: str) -> None:
    created = await client.post(BASE, json=policy_body(min_records=5), headers=alice)
    assert created.status_code == 201, created.text
    policy = created.json()
    assert policy["owner"] == "User:alice"
    assert policy["consumers"] == {"groups": ["billing"], "spark": ["enricher"]}
    assert (policy["min_records"], policy["enabled"], policy["last_run_at"]) == (5, True, None)
    assert created.headers["Location"] == f"{BASE}/inter"
    assert (await client.post(BASE, json=policy_body(), headers=alice)).status_code == 409

    patched = await client.patch(
        f"{BASE}/inter", json={"consumers": "all_groups", "enabled": False}, headers=alice
    )
    assert patched.status_code == 200, patched.text
    assert (patched.json()["consumers"], patched.json()["enabled"]) == ("all_groups", False)
    assert patched.json()["min_records"] == 5

    listed = await client.get(BASE, headers=alice)
    assert [p["name"] for p in listed.json()["items"]] == ["inter"]
    assert (await client.get(f"{BASE}/inter/runs", headers=alice)).json() == {
        "items": [],
        "next_cursor": None,
    }
    assert (await client.delete(f"{BASE}/inter", headers=alice)).status_code == 204
    assert (await client.get(f"{BASE}/inter", headers=alice)).status_code == 404

    audit = await client.get("/v1/audit", headers=alice)
    actions = [e["action"] for e in audit.json()["items"]]
    assert actions == ["policy.created", "policy.updated", "policy.deleted"]


@pytest.mark.parametrize(
    "change",
    [
        {"topics": {"prefix": "a", "regex": "b"}},
        {"topics": {}},
        {"topics": {"regex": "("}},
        {"topics": {"names": []}},
        {"consumers": {"groups": [], "spark": []}},
        {"consumers": {"groups": ["spark-kafka-source-abc-driver-0"]}},
        {"consumers": "some_groups"},
        {"consumers": {"all_groups": True, "groups": ["billing"]}},
        {"topics": {"read_by_connectors": True}},
        {"topics": {"read_by_connectors": False, "prefix": "inter."}},
        {"topics": {"read_by_connectors": True, "prefix": "inter.", "regex": "inter"}},
        {"consumers": {"connect": {"cluster": "pipelines", "connectors": []}}},
        {"consumers": {"connect": {"cluster": "pipelines", "connectors": "some_sinks"}}},
        {"interval_seconds": 0},
        {"min_records": -1},
        {"min_age_seconds": "60"},
        {"min_age_seconds": 60.5},
        {"interval_seconds": True},
        {"name": "bad name"},
        {"unknown": 1},
    ],
)
async def test_invalid_policies_are_refused(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: object, change: dict[str, Any]
) -> None:
    response = await client.post(BASE, json=policy_body() | change, headers=alice)
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")


async def test_an_unconfigured_connect_cluster_is_not_found(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: object
) -> None:
    """A schema-valid policy naming a Connect cluster PURGE_CONNECT does not have: 404 naming it."""
    unconfigured = {"consumers": {"connect": {"cluster": "unconfigured", "connectors": ["s3-sink"]}}}
    response = await client.post(BASE, json=policy_body() | unconfigured, headers=alice)
    assert response.status_code == 404, response.text
    problem = response.json()
    assert problem["type"] == "/problems/connect-cluster-not-found"
    assert "'unconfigured'" in problem["detail"]
    assert (await client.get(BASE, headers=alice)).json()["items"] == []
    assert (await client.post(BASE, json=policy_body(), headers=alice)).status_code == 201
    patched = await client.patch(f"{BASE}/inter", json=unconfigured, headers=alice)
    assert patched.status_code == 404, patched.text


async def test_topics_read_by_connectors_against_stored_consumers_conflict(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: object
) -> None:
    """An update asking for the topics connectors read, keeping consumers without Connect sinks: what is
    stored makes it impossible (409), which no schema of the update can say."""
    assert (await client.post(BASE, json=policy_body(), headers=alice)).status_code == 201
    change = {"topics": {"read_by_connectors": True}}
    response = await client.patch(f"{BASE}/inter", json=change, headers=alice)
    assert response.status_code == 409, response.text
    assert response.json()["errors"][0]["pointer"] == "#/topics/read_by_connectors"
    # Given with consumers that have no Connect sinks, the update itself is invalid.
    both = change | {"consumers": {"groups": ["billing"]}}
    assert (await client.patch(f"{BASE}/inter", json=both, headers=alice)).status_code == 422


async def test_integral_numbers_are_integers(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: object
) -> None:
    """600.0 and 6e2 are integers to JSON Schema: taken as 600; 600.5 is not one."""
    body = policy_body(interval_seconds=600.0, min_records=5e0)
    created = await client.post(BASE, json=body, headers=alice)
    assert created.status_code == 201, created.text
    assert (created.json()["interval_seconds"], created.json()["min_records"]) == (600, 5)
    raw = {**alice, "content-type": "application/json"}
    patched = await client.patch(f"{BASE}/inter", content=b'{"min_age_seconds": 6e2}', headers=raw)
    assert patched.status_code == 200, patched.text
    assert patched.json()["min_age_seconds"] == 600
    refused = await client.patch(f"{BASE}/inter", json={"min_age_seconds": 600.5}, headers=alice)
    assert refused.status_code == 422, refused.text


async def test_unknown_cluster_and_policy(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: object
) -> None:
    assert (
        await client.post("/v1/clusters/nowhere/policies", json=policy_body(), headers=alice)
    ).status_code == 404
    assert (await client.patch(f"{BASE}/absent", json={"enabled": False}, headers=alice)).status_code == 404
    assert (await client.get(f"{BASE}/absent/runs", headers=alice)).status_code == 404


async def test_all_groups_combine_with_spark(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: object
) -> None:
    body = policy_body(consumers={"all_groups": True, "spark": ["enricher"]})
    created = await client.post(BASE, json=body, headers=alice)
    assert created.status_code == 201, created.text
    assert created.json()["consumers"] == {"all_groups": True, "spark": ["enricher"]}
    assert (created.json()["skip_foreign_active_groups"], created.json()["await_previous_deletion"]) == (
        False,
        False,
    )
    legacy = await client.post(BASE, json=policy_body(name="every", consumers="all_groups"), headers=alice)
    assert legacy.json()["consumers"] == "all_groups"
