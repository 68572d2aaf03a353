"""DELETE on TOPIC is enforced when a deletion is submitted and again right before it is sent."""

from __future__ import annotations

import asyncio
from typing import Any

from helpers.authz import Service, assert_problem, deletion, low_watermark

from app.worker.standalone import standalone_workers


async def test_mixed_request_is_refused_whole_and_audited(service: Service, orders: Any) -> None:
    await service.grant(principal="User:alice", resource_name="orders.", pattern_type="PREFIXED")
    alice = await service.headers("alice")

    body = deletion(("orders.eu", 0, 5), ("orders.us", 0, 5), ("payments", 0, 5))
    problem = assert_problem(await service.client.post("/v1/deletions", json=body, headers=alice), 403)

    assert problem["denied_resources"] == ["payments"]
    assert "payments" in problem["detail"]
    assert "orders.eu" not in problem["detail"]
    assert await service.execute() == 0
    listed = await service.client.get("/v1/deletions", headers=await service.headers("admin"))
    assert listed.json()["items"] == []
    assert [low_watermark(orders, t, 0) for t in ("orders.eu", "orders.us", "payments")] == [0, 0, 0]
    assert await service.audit("deletion.requested") == []
    (denied,) = await service.audit("authz.denied")
    assert denied["principal"] == "User:alice"
    assert denied["client_host"] == "127.0.0.1"
    assert denied["cluster"] == "demo"
    assert denied["request_id"] == problem["request_id"]
    details = denied["details"]
    assert details["operation"] == "DELETE"
    assert details["topics"] == ["payments"]
    assert details["denied"] == [
        {
            "resource_name": "payments",
            "reason": "no ACL found, allow_everyone_if_no_acl_found=false",
            "binding": None,
        }
    ]


async def test_deny_beats_prefixed_allow_and_names_the_binding(service: Service, orders: Any) -> None:
    await service.grant(principal="User:alice", resource_name="orders.", pattern_type="PREFIXED")
    await service.grant(principal="User:*", resource_name="orders.us", permission_type="DENY")
    alice = await service.headers("alice")

    body = deletion(("orders.us", 0, 5))
    problem = assert_problem(await service.client.post("/v1/deletions", json=body, headers=alice), 403)

    assert problem["denied_resources"] == ["orders.us"]
    (denied,) = await service.audit("authz.denied")
    assert denied["details"]["denied"][0]["binding"] == {
        "principal": "User:*",
        "host": "*",
        "operation": "DELETE",
        "permission_type": "DENY",
        "resource_type": "TOPIC",
        "resource_name": "orders.us",
        "pattern_type": "LITERAL",
    }
    accepted = await service.client.post("/v1/deletions", json=deletion(("orders.eu", 1, 4)), headers=alice)
    assert accepted.status_code == 202, accepted.text


async def test_binding_revoked_before_execution_fails_with_nothing_sent(
    service: Service, orders: Any
) -> None:
    await service.grant(principal="User:alice", resource_name="orders.", pattern_type="PREFIXED")
    await service.grant(principal="User:alice", resource_name="payments")
    alice = await service.headers("alice")
    body = deletion(("orders.eu", 0, 5), ("orders.eu", 1, 6), ("payments", 0, 7))
    accepted = await service.client.post("/v1/deletions", json=body, headers=alice)
    assert accepted.status_code == 202, accepted.text

    revoked = await service.revoke(principal="User:alice", resource_name="orders.", pattern_type="PREFIXED")
    assert len(revoked) == 1
    assert await service.execute() == 3

    read = await service.client.get(accepted.headers["location"], headers=alice)
    partitions = {(p["topic"], p["partition"]): p for p in read.json()["partitions"]}
    for key in (("orders.eu", 0), ("orders.eu", 1)):
        assert partitions[key]["status"] == "failed"
        assert partitions[key]["error_code"] == "AUTHORIZATION_REVOKED"
        assert "nothing was sent" in partitions[key]["error_message"]
    assert partitions[("payments", 0)]["status"] == "succeeded"
    assert read.json()["status"] == "partially_failed"
    assert [low_watermark(orders, "orders.eu", p) for p in (0, 1)] == [0, 0]
    assert low_watermark(orders, "payments", 0) == 7
    failures = await service.audit("deletion.partition_failed")
    assert sorted((e["details"]["topic"], e["details"]["error_code"]) for e in failures) == [
        ("orders.eu", "AUTHORIZATION_REVOKED"),
        ("orders.eu", "AUTHORIZATION_REVOKED"),
    ]


async def test_group_principal_from_the_token_is_honoured_at_submit_and_execution(
    service: Service, orders: Any
) -> None:
    await service.grant(principal="Group:orders", resource_name="orders.", pattern_type="PREFIXED")
    carol, bob = await service.headers("carol"), await service.headers("bob")
    body = deletion(("orders.eu", 0, 3))

    assert_problem(await service.client.post("/v1/deletions", json=body, headers=bob), 403)
    accepted = await service.client.post("/v1/deletions", json=body, headers=carol)
    assert accepted.status_code == 202, accepted.text
    assert await service.execute() == 1

    read = await service.client.get(accepted.headers["location"], headers=carol)
    assert read.json()["status"] == "succeeded", read.text
    assert low_watermark(orders, "orders.eu", 0) == 3


async def test_forwarded_for_from_an_untrusted_peer_is_ignored(service: Service, orders: Any) -> None:
    await service.grant(principal="User:alice", resource_name="orders.eu", host="10.9.9.9")
    forged = await service.headers("alice", **{"X-Forwarded-For": "10.9.9.9"})

    response = await service.client.post("/v1/deletions", json=deletion(("orders.eu", 0, 2)), headers=forged)

    assert_problem(response, 403)
    (denied,) = await service.audit("authz.denied")
    assert denied["client_host"] == "127.0.0.1"
    assert denied["details"]["host"] == "127.0.0.1"


async def test_forwarded_for_from_a_trusted_proxy_decides_the_host(
    service: Service, orders: Any, settings: Any
) -> None:
    import httpx

    from app.main import create_app

    await service.grant(principal="User:alice", resource_name="orders.eu", host="10.9.9.9")
    proxied = settings.model_copy(update={"trusted_proxies": "127.0.0.1"})
    app = create_app(proxied, run_executor=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40001))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            behind = Service(app, client, proxied)
            body = deletion(("orders.eu", 0, 2))
            from_bound_host = await behind.headers("alice", **{"X-Forwarded-For": "10.9.9.9"})
            other_host = await behind.headers("alice", **{"X-Forwarded-For": "10.9.9.8"})
            assert_problem(await client.post("/v1/deletions", json=body, headers=other_host), 403)
            accepted = await client.post("/v1/deletions", json=body, headers=from_bound_host)
            assert accepted.status_code == 202, accepted.text


async def test_a_workers_only_process_also_withholds_revoked_topics(service: Service, orders: Any) -> None:
    await service.grant(principal="User:alice", resource_name="orders.", pattern_type="PREFIXED")
    alice = await service.headers("alice")
    accepted = await service.client.post("/v1/deletions", json=deletion(("orders.eu", 0, 5)), headers=alice)
    assert accepted.status_code == 202, accepted.text
    await service.revoke(principal="User:alice", resource_name="orders.", pattern_type="PREFIXED")

    runtime = service.runtime
    # What `kafka-purge serve --workers-only` runs: the executor and sweeps without the HTTP app.
    async with standalone_workers(service.settings, runtime.sessionmaker, runtime.gateway):
        for _ in range(200):
            read = await service.client.get(accepted.headers["location"], headers=alice)
            if read.json()["status"] == "failed":
                break
            await asyncio.sleep(0.05)
    [partition] = read.json()["partitions"]
    assert (partition["status"], partition["error_code"]) == ("failed", "AUTHORIZATION_REVOKED")
    assert low_watermark(orders, "orders.eu", 0) == 0
