"""Who sees a deletion: its requester and principals with DESCRIBE on every topic it touches; anyone else
gets a 404 (indistinguishable from an unknown id) and lists without it. Cancel needs DELETE on every
topic; the audit trail needs DESCRIBE on CLUSTER."""

from __future__ import annotations

from typing import Any

from helpers.authz import Service, assert_problem, deletion


async def _alice_deletion(service: Service) -> str:
    await service.grant(principal="User:alice", resource_name="orders.", pattern_type="PREFIXED")
    body = deletion(("orders.eu", 0, 5), ("orders.us", 0, 5))
    accepted = await service.client.post("/v1/deletions", json=body, headers=await service.headers("alice"))
    assert accepted.status_code == 202, accepted.text
    return str(accepted.headers["location"])


async def test_another_principal_cannot_see_or_cancel(service: Service, orders: Any) -> None:
    location = await _alice_deletion(service)
    bob = await service.headers("bob")
    unknown = location.rsplit("/", 1)[0] + "/00000000-0000-0000-0000-000000000000"

    for path in (location, f"{location}/partitions", unknown):
        problem = assert_problem(await service.client.get(path, headers=bob), 404)
        assert problem["title"] == "Not found"
    assert_problem(await service.client.post(f"{location}/cancel", headers=bob), 404)
    listed = await service.client.get("/v1/deletions", headers=bob)
    assert listed.status_code == 200
    assert listed.json()["items"] == []
    assert await service.audit("deletion.cancelled") == []


async def test_describe_on_every_topic_makes_it_visible(service: Service, orders: Any) -> None:
    location = await _alice_deletion(service)
    await service.grant(principal="Group:auditors", resource_name="orders.eu", operation="DESCRIBE")
    auditor = await service.headers("auditor")
    assert_problem(await service.client.get(location, headers=auditor), 404)

    await service.grant(principal="Group:auditors", resource_name="orders.us", operation="DESCRIBE")

    read = await service.client.get(location, headers=auditor)
    assert read.status_code == 200
    assert read.json()["principal"] == "User:alice"
    assert (await service.client.get(f"{location}/partitions", headers=auditor)).status_code == 200
    listed = await service.client.get("/v1/deletions", headers=auditor)
    assert [item["id"] for item in listed.json()["items"]] == [read.json()["id"]]


async def test_list_filters_out_what_the_caller_may_not_see(service: Service, orders: Any) -> None:
    await _alice_deletion(service)
    await service.grant(principal="User:bob", resource_name="payments")
    bob = await service.headers("bob")
    own = await service.client.post("/v1/deletions", json=deletion(("payments", 0, 1)), headers=bob)
    assert own.status_code == 202, own.text

    bob_list = (await service.client.get("/v1/deletions", headers=bob)).json()["items"]
    admin_list = (await service.client.get("/v1/deletions", headers=await service.headers("admin"))).json()

    assert [item["id"] for item in bob_list] == [own.json()["id"]]
    assert len(admin_list["items"]) == 2


async def test_cancel_needs_delete_on_every_topic(service: Service, orders: Any) -> None:
    location = await _alice_deletion(service)
    await service.grant(
        principal="Group:auditors", resource_name="orders.", pattern_type="PREFIXED", operation="DESCRIBE"
    )
    auditor = await service.headers("auditor")

    problem = assert_problem(await service.client.post(f"{location}/cancel", headers=auditor), 403)
    assert problem["denied_resources"] == ["orders.eu", "orders.us"]
    assert [e["principal"] for e in await service.audit("authz.denied")] == ["User:auditor"]

    cancelled = await service.client.post(f"{location}/cancel", headers=await service.headers("alice"))
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled"


async def test_audit_trail_needs_describe_on_cluster(service: Service, orders: Any) -> None:
    auditor = await service.headers("auditor")
    for path in ("/v1/audit", "/v1/audit/verify", "/v1/audit/export"):
        assert_problem(await service.client.get(path, headers=auditor), 403)

    await service.grant(
        principal="Group:auditors",
        resource_type="CLUSTER",
        resource_name="kafka-cluster",
        operation="DESCRIBE",
    )

    for path in ("/v1/audit", "/v1/audit/verify", "/v1/audit/export"):
        response = await service.client.get(path, headers=auditor)
        assert response.status_code == 200, (path, response.text)
    denials = await service.audit("authz.denied")
    assert len(denials) == 3
    assert {d["details"]["resource_type"] for d in denials} == {"CLUSTER"}
