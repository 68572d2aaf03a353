"""``acl_source: kafka``: the service decides from the cluster's own bindings, read with DescribeAcls by
its SASL principal (a super user of the emulated cluster), created here with CreateAcls by a real client.
The ACL admin endpoints are then read-only; a service principal that may not describe the ACLs fails
closed (503)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)
from helpers.authz import Service, assert_problem, binding, deletion, low_watermark, produce
from pydantic import SecretStr

from app.settings import ClusterSettings

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:importlib.resources._legacy")
SASL = {"purge": "purge-secret", "nobody": "nobody-secret"}
ACLS = "/v1/clusters/demo/acls"
CACHE_SECONDS = 0.3


@pytest.fixture
async def emulator() -> AsyncIterator[Any]:
    from kafka_emulator import EmulatedCluster

    cluster = EmulatedCluster(brokers=1, sasl_users=SASL, acl_authorizer=True, super_users=["User:purge"])
    await cluster.start()
    try:
        for name in ("orders.eu", "payments"):
            cluster.create_topic(name, partitions=1, replication_factor=1)
            await produce(cluster.bootstrap, name, {0: 10}, **_aiokafka_sasl("purge"))
        yield cluster
    finally:
        await cluster.stop()


@pytest.fixture
def service_user() -> str:
    return "purge"


@pytest.fixture
def clusters(emulator: Any, service_user: str) -> dict[str, ClusterSettings]:
    return {
        "demo": ClusterSettings(
            bootstrap_servers=emulator.bootstrap,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_username=service_user,
            sasl_password=SecretStr(SASL[service_user]),
            request_timeout_ms=5_000,
            acl_source="kafka",
            acl_cache_seconds=CACHE_SECONDS,
        )
    }


def _aiokafka_sasl(user: str) -> dict[str, str]:
    return {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": user,
        "sasl_plain_password": SASL[user],
    }


def _admin(emulator: Any) -> AdminClient:
    return AdminClient(
        {
            "bootstrap.servers": emulator.bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "purge",
            "sasl.password": SASL["purge"],
            "log_level": 0,
        }
    )


def _create_acls(emulator: Any, bindings: list[AclBinding]) -> None:
    admin = _admin(emulator)  # kept referenced until the futures resolve
    for future in admin.create_acls(bindings, request_timeout=10).values():
        future.result()


def _delete_acls(emulator: Any, acl_filter: AclBindingFilter) -> None:
    admin = _admin(emulator)
    for future in admin.delete_acls([acl_filter], request_timeout=10).values():
        future.result()


ALICE_ORDERS = AclBinding(
    ResourceType.TOPIC,
    "orders.",
    ResourcePatternType.PREFIXED,
    "User:alice",
    "*",
    AclOperation.DELETE,
    AclPermissionType.ALLOW,
)


async def test_decides_from_the_clusters_own_bindings(service: Service, emulator: Any) -> None:
    await asyncio.to_thread(_create_acls, emulator, [ALICE_ORDERS])
    alice = await service.headers("alice")

    assert_problem(
        await service.client.post("/v1/deletions", json=deletion(("payments", 0, 3)), headers=alice), 403
    )
    accepted = await service.client.post("/v1/deletions", json=deletion(("orders.eu", 0, 3)), headers=alice)
    assert accepted.status_code == 202, accepted.text
    assert await service.execute() == 1
    read = await service.client.get(accepted.headers["location"], headers=alice)
    assert read.json()["status"] == "succeeded", read.text
    assert low_watermark(emulator, "orders.eu", 0) == 3

    admin = await service.headers("admin")
    listed = await service.client.get(ACLS, params={"principal": "User:alice"}, headers=admin)
    assert listed.json() == {
        "source": "kafka",
        "items": [binding(principal="User:alice", resource_name="orders.", pattern_type="PREFIXED")],
    }


async def test_admin_endpoints_are_read_only(service: Service, emulator: Any) -> None:
    admin = await service.headers("admin")
    body = binding(principal="User:alice", resource_name="payments")

    for response in (
        await service.client.post(ACLS, json=body, headers=admin),
        await service.client.delete(ACLS, params={"principal": "User:alice"}, headers=admin),
    ):
        problem = assert_problem(response, 409)
        assert "acl_source: kafka" in problem["detail"]
    assert await service.audit("acl.created") == []


async def test_a_binding_removed_in_kafka_stops_applying_after_the_cache_time(
    service: Service, emulator: Any
) -> None:
    await asyncio.to_thread(_create_acls, emulator, [ALICE_ORDERS])
    alice = await service.headers("alice")
    body = deletion(("orders.eu", 0, 2))
    assert (await service.client.post("/v1/deletions", json=body, headers=alice)).status_code == 202

    await asyncio.to_thread(_delete_acls, emulator, _filter())
    removed_at = time.monotonic()
    while (
        response := await service.client.post("/v1/deletions", json=body, headers=alice)
    ).status_code == 202:
        assert time.monotonic() - removed_at < CACHE_SECONDS + 5, "the removed binding still applies"
        await asyncio.sleep(0.05)
    assert_problem(response, 403)
    assert await service.execute() >= 1
    deletions = (await service.client.get("/v1/deletions", headers=alice)).json()["items"]
    assert {d["status"] for d in deletions} == {"failed"}


def _filter() -> AclBindingFilter:
    return AclBindingFilter(
        ResourceType.TOPIC,
        "orders.",
        ResourcePatternType.PREFIXED,
        "User:alice",
        "*",
        AclOperation.DELETE,
        AclPermissionType.ALLOW,
    )


@pytest.mark.parametrize("service_user", ["nobody"])
async def test_a_service_principal_that_cannot_describe_acls_fails_closed(
    service: Service, emulator: Any
) -> None:
    alice = await service.headers("alice")

    response = await service.client.post("/v1/deletions", json=deletion(("orders.eu", 0, 2)), headers=alice)

    problem = assert_problem(response, 503)
    assert "cannot be read from Kafka" in problem["detail"]
