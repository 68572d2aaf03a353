"""/v1/clusters/{cluster}/acls: ALTER on CLUSTER to change, DESCRIBE on CLUSTER to list, Kafka's
validation and filter semantics, every change audited, and a change made through one service instance
applying at once in another."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from helpers.authz import Service, assert_problem, binding, deletion

ACLS = "/v1/clusters/demo/acls"


async def test_changes_need_alter_and_listing_needs_describe_on_cluster(
    service: Service, orders: Any
) -> None:
    alice = await service.headers("alice")
    body = binding(principal="User:alice", resource_name="payments")
    assert_problem(await service.client.post(ACLS, json=body, headers=alice), 403)
    assert_problem(await service.client.get(ACLS, headers=alice), 403)
    assert_problem(await service.client.delete(ACLS, params={"principal": "User:x"}, headers=alice), 403)

    await service.grant(
        principal="User:alice", resource_type="CLUSTER", resource_name="kafka-cluster", operation="DESCRIBE"
    )
    assert (await service.client.get(ACLS, headers=alice)).status_code == 200
    assert_problem(await service.client.post(ACLS, json=body, headers=alice), 403)

    await service.grant(
        principal="User:alice", resource_type="CLUSTER", resource_name="kafka-cluster", operation="ALTER"
    )
    created = await service.client.post(ACLS, json=body, headers=alice)
    assert created.status_code == 201, created.text
    assert created.json() == {**body, "principal": "User:alice"}
    denials = await service.audit("authz.denied")
    assert [d["details"]["operation"] for d in denials] == ["ALTER", "DESCRIBE", "ALTER", "ALTER"]


async def test_create_conflict_validation_and_audit(service: Service, orders: Any) -> None:
    admin = await service.headers("admin")
    body = binding(principal="User:bob", resource_name="orders.", pattern_type="PREFIXED")
    assert (await service.client.post(ACLS, json=body, headers=admin)).status_code == 201
    assert_problem(await service.client.post(ACLS, json=body, headers=admin), 409)

    invalid = [
        ({"pattern_type": "MATCH"}, "/pattern_type"),
        ({"pattern_type": "ANY"}, "/pattern_type"),
        ({"principal": "bob"}, "/principal"),
        ({"host": " 10.0.0.1"}, "/host"),
    ]
    for change, pointer in invalid:
        problem = assert_problem(await service.client.post(ACLS, json={**body, **change}, headers=admin), 422)
        assert pointer in [e.get("pointer") for e in problem["errors"]], problem
    others: list[dict[str, object]] = [
        {"operation": "ANY"},
        {"permission_type": "UNKNOWN"},
        {"resource_name": ""},
        {"extra": 1},
    ]
    for other in others:
        assert_problem(await service.client.post(ACLS, json={**body, **other}, headers=admin), 422)
    assert_problem(await service.client.post("/v1/clusters/nowhere/acls", json=body, headers=admin), 404)

    (created,) = await service.audit("acl.created")
    assert created["principal"] == "User:admin"
    assert created["cluster"] == "demo"
    assert created["details"]["bindings"] == [body]


async def test_filters_follow_kafka(service: Service, orders: Any) -> None:
    bindings = [
        binding(principal="User:alice", resource_name="orders.eu"),
        binding(principal="User:alice", resource_name="orders.", pattern_type="PREFIXED"),
        binding(principal="User:*", resource_name="*", operation="DESCRIBE"),
        binding(
            principal="User:bob", resource_name="orders.e", pattern_type="PREFIXED", permission_type="DENY"
        ),
        binding(principal="User:bob", resource_name="orders.us"),
        binding(principal="User:bob", resource_name="ord", pattern_type="PREFIXED", resource_type="GROUP"),
    ]
    for body in bindings:
        await service.grant(**body)
    admin = await service.headers("admin")

    async def names(**query: str) -> list[tuple[str, str, str]]:
        response = await service.client.get(ACLS, params=query, headers=admin)
        assert response.status_code == 200, response.text
        assert response.json()["source"] == "service"
        return [(b["principal"], b["pattern_type"], b["resource_name"]) for b in response.json()["items"]]

    assert len(await names()) == 6
    assert await names(pattern_type="MATCH", resource_type="TOPIC", resource_name="orders.eu") == [
        ("User:alice", "LITERAL", "orders.eu"),
        ("User:alice", "PREFIXED", "orders."),
        ("User:*", "LITERAL", "*"),
        ("User:bob", "PREFIXED", "orders.e"),
    ]
    assert await names(pattern_type="PREFIXED", principal="User:bob") == [
        ("User:bob", "PREFIXED", "orders.e"),
        ("User:bob", "PREFIXED", "ord"),
    ]
    assert await names(resource_name="orders.", pattern_type="any") == [("User:alice", "PREFIXED", "orders.")]
    assert await names(principal="User:alice", operation="describe") == []
    assert await names(permission_type="DENY", resource_type="TOPIC") == [
        ("User:bob", "PREFIXED", "orders.e")
    ]
    bad = await service.client.get(ACLS, params={"operation": "DESTROY"}, headers=admin)
    assert assert_problem(bad, 422)["errors"][0]["pointer"] == "/operation"

    deleted = await service.client.delete(
        ACLS, params={"principal": "User:bob", "resource_type": "TOPIC"}, headers=admin
    )
    assert deleted.status_code == 200, deleted.text
    assert [b["resource_name"] for b in deleted.json()["items"]] == ["orders.e", "orders.us"]
    assert len(await names()) == 4
    (event,) = await service.audit("acl.deleted")
    assert [b["resource_name"] for b in event["details"]["bindings"]] == ["orders.e", "orders.us"]
    nothing = await service.client.delete(ACLS, params={"principal": "User:nobody"}, headers=admin)
    assert nothing.json()["items"] == []
    assert len(await service.audit("acl.deleted")) == 1


async def test_a_change_through_one_instance_applies_at_once_in_another(
    service: Service, orders: Any, settings: Any
) -> None:
    from app.main import create_app

    await service.grant(principal="User:alice", resource_name="orders.", pattern_type="PREFIXED")
    other_app = create_app(settings, run_executor=False)
    async with other_app.router.lifespan_context(other_app):
        transport = httpx.ASGITransport(app=other_app, client=("127.0.0.1", 40002))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            other = Service(other_app, client, settings)
            alice = await other.headers("alice")
            body = deletion(("orders.eu", 0, 1))
            assert (await client.post("/v1/deletions", json=body, headers=alice)).status_code == 202
            # The other instance has the authorizer cached now; revoke through the first one.
            await service.revoke(principal="User:alice")
            assert_problem(await client.post("/v1/deletions", json=body, headers=alice), 403)


async def test_concurrent_creates_of_one_binding_store_it_once(service: Service, orders: Any) -> None:
    admin = await service.headers("admin")
    body = binding(principal="User:dave", resource_name="payments")

    responses = await asyncio.gather(*(service.client.post(ACLS, json=body, headers=admin) for _ in range(5)))

    assert sorted(r.status_code for r in responses) == [201, 409, 409, 409, 409]
    listed = await service.client.get(ACLS, params={"principal": "User:dave"}, headers=admin)
    assert len(listed.json()["items"]) == 1
    assert len(await service.audit("acl.created")) == 1
