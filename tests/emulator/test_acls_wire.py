"""ACL administration and broker-side authorization over the wire (librdkafka and kafka-python clients).

librdkafka drops the top-level error of a DescribeAcls response (it yields an empty list), so the
DescribeAcls error cases are read with kafka-python, which raises them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from kafka_emulator import EmulatedCluster

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:importlib.resources._legacy")
USERS = {"admin": "admin-secret", "alice": "alice-secret"}
TOPIC = "secured-orders"
ANY_ACL = AclBindingFilter(
    ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
)


@pytest.fixture
async def secured() -> AsyncIterator[EmulatedCluster]:
    async with EmulatedCluster(
        brokers=3, sasl_users=USERS, super_users=["User:admin"], acl_authorizer=True
    ) as cluster:
        cluster.create_topic(TOPIC, 2)
        producer = AIOKafkaProducer(
            bootstrap_servers=cluster.bootstrap,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_plain_username="admin",
            sasl_plain_password=USERS["admin"],
        )
        await producer.start()
        try:
            for i in range(5):
                await producer.send_and_wait(TOPIC, b"record-%d" % i, partition=0)
        finally:
            await producer.stop()
        yield cluster


def admin_for(cluster: EmulatedCluster, user: str | None) -> AdminClient:
    config: dict[str, Any] = {"bootstrap.servers": cluster.bootstrap, "log_level": 0}
    if user is not None:
        config |= {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": user,
            "sasl.password": USERS[user],
        }
    return AdminClient(config)


def error_name(call: Any) -> str:
    try:
        call()
    except KafkaException as exc:
        return str(exc.args[0].name())
    return "NONE"


def binding(principal: str, operation: AclOperation, name: str = TOPIC, prefixed: bool = False) -> AclBinding:
    pattern = ResourcePatternType.PREFIXED if prefixed else ResourcePatternType.LITERAL
    return AclBinding(ResourceType.TOPIC, name, pattern, principal, "*", operation, AclPermissionType.ALLOW)


def create(admin: AdminClient, bindings: list[AclBinding]) -> list[str]:
    futures = admin.create_acls(bindings, request_timeout=10)
    return [error_name(lambda f=futures[b]: f.result()) for b in bindings]


def describe(admin: AdminClient, acl_filter: AclBindingFilter = ANY_ACL) -> list[AclBinding]:
    found: list[AclBinding] = admin.describe_acls(acl_filter, request_timeout=10).result()
    return found


def delete_records(admin: AdminClient, offset: int) -> int | str:
    futures = admin.delete_records(
        [TopicPartition(TOPIC, 0, offset)], request_timeout=10, operation_timeout=10
    )
    (future,) = futures.values()
    try:
        return int(future.result().low_watermark)
    except KafkaException as exc:
        return str(exc.args[0].name())


def acl_lifecycle(cluster: EmulatedCluster) -> dict[str, Any]:
    admin, alice = admin_for(cluster, "admin"), admin_for(cluster, "alice")
    seen: dict[str, Any] = {}
    seen["create"] = create(admin, [binding("User:alice", AclOperation.DESCRIBE)])
    seen["alice_create"] = create(alice, [binding("User:alice", AclOperation.ALL)])
    seen["alice_describe"] = kafka_python_describe(cluster.bootstrap, "alice")
    seen["described"] = describe(admin)
    seen["delete_without_grant"] = delete_records(alice, 2)
    seen["grant"] = create(admin, [binding("User:alice", AclOperation.DELETE, "secured-", prefixed=True)])
    seen["delete_with_grant"] = delete_records(alice, 2)
    only_prefixed = AclBindingFilter(
        ResourceType.TOPIC,
        TOPIC,
        ResourcePatternType.MATCH,
        None,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    seen["matching"] = describe(admin, only_prefixed)
    alice_filter = AclBindingFilter(
        ResourceType.ANY,
        None,
        ResourcePatternType.ANY,
        "User:alice",
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    seen["deleted"] = admin.delete_acls([alice_filter], request_timeout=10)[alice_filter].result()
    seen["after_delete"] = describe(admin)
    return seen


async def test_acls_created_described_deleted_and_enforced(secured: EmulatedCluster) -> None:
    seen = await asyncio.to_thread(acl_lifecycle, secured)
    assert seen["create"] == ["NONE"]
    assert seen["alice_create"] == ["CLUSTER_AUTHORIZATION_FAILED"]
    assert seen["alice_describe"] == "ClusterAuthorizationFailedError"
    assert seen["described"] == [binding("User:alice", AclOperation.DESCRIBE)]
    assert seen["delete_without_grant"] == "TOPIC_AUTHORIZATION_FAILED"
    assert seen["grant"] == ["NONE"]
    assert seen["delete_with_grant"] == 2
    assert sorted(seen["matching"], key=str) == sorted(
        [
            binding("User:alice", AclOperation.DESCRIBE),
            binding("User:alice", AclOperation.DELETE, "secured-", True),
        ],
        key=str,
    )
    assert len(seen["deleted"]) == 2
    assert seen["after_delete"] == []
    assert secured.state()["acls"]["acls"] == []


def invalid_creations(cluster: EmulatedCluster) -> list[str]:
    admin = admin_for(cluster, "admin")
    cluster_acl = AclBinding(
        ResourceType.BROKER,
        "other-name",
        ResourcePatternType.LITERAL,
        "User:x",
        "*",
        AclOperation.ALTER,
        AclPermissionType.ALLOW,
    )
    return create(admin, [cluster_acl, binding("User:x", AclOperation.READ, "")])


async def test_invalid_acls_are_refused(secured: EmulatedCluster) -> None:
    assert await asyncio.to_thread(invalid_creations, secured) == ["INVALID_REQUEST", "INVALID_REQUEST"]


def without_authorizer(cluster: EmulatedCluster) -> tuple[list[str], Any]:
    admin = admin_for(cluster, None)
    return create(admin, [binding("User:alice", AclOperation.READ)]), kafka_python_describe(
        cluster.bootstrap, None
    )


async def test_acl_apis_without_authorizer_answer_security_disabled(cluster: EmulatedCluster) -> None:
    created, described = await asyncio.to_thread(without_authorizer, cluster)
    assert created == ["SECURITY_DISABLED"]
    assert described == "SecurityDisabledError"


def kafka_python_describe(bootstrap: str, user: str | None) -> Any:
    """kafka-python's describe_acls of alice's TOPIC ACLs: (acls, error class), or the raised error's name."""
    from kafka import KafkaAdminClient
    from kafka.admin import ACLFilter, ACLOperation, ACLPermissionType, ResourcePatternFilter
    from kafka.admin import ACLResourcePatternType as PatternType
    from kafka.admin import ResourceType as KpResourceType
    from kafka.errors import KafkaError

    sasl: dict[str, Any] = {}
    if user is not None:
        sasl = {
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN",
            "sasl_plain_username": user,
            "sasl_plain_password": USERS[user],
        }
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **sasl)
    try:
        pattern = ResourcePatternFilter(KpResourceType.TOPIC, TOPIC, PatternType.LITERAL)
        acl_filter = ACLFilter("User:alice", "*", ACLOperation.ANY, ACLPermissionType.ANY, pattern)
        return admin.describe_acls(acl_filter)
    except KafkaError as exc:
        return type(exc).__name__
    finally:
        admin.close()


async def test_kafka_python_reads_acls_created_by_librdkafka(secured: EmulatedCluster) -> None:
    admin = admin_for(secured, "admin")
    assert await asyncio.to_thread(create, admin, [binding("User:alice", AclOperation.READ)]) == ["NONE"]
    acls, error = await asyncio.to_thread(kafka_python_describe, secured.bootstrap, "admin")
    assert error.__name__ == "NoError"
    assert [(a.principal, a.host, a.operation.name, a.permission_type.name) for a in acls] == [
        ("User:alice", "*", "READ", "ALLOW")
    ]


def consume_as_alice(cluster: EmulatedCluster, group: str) -> tuple[int, str | None]:
    """librdkafka consumer as alice: records read and the first error event (group authorization)."""
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "alice",
            "sasl.password": USERS["alice"],
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "log_level": 0,
        }
    )
    consumer.subscribe([TOPIC])
    count, error = 0, None
    deadline = time.monotonic() + 15
    try:
        while count < 5 and error is None and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error() is not None:
                error = message.error().name()
            else:
                count += 1
        if count:
            consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return count, error


async def test_group_read_is_required_to_consume_in_a_group(secured: EmulatedCluster) -> None:
    admin = admin_for(secured, "admin")
    topic_read = binding("User:alice", AclOperation.READ)
    assert await asyncio.to_thread(create, admin, [topic_read]) == ["NONE"]
    assert await asyncio.to_thread(consume_as_alice, secured, "alice-group") == (
        0,
        "GROUP_AUTHORIZATION_FAILED",
    )
    group_read = AclBinding(
        ResourceType.GROUP,
        "alice-",
        ResourcePatternType.PREFIXED,
        "User:alice",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )
    assert await asyncio.to_thread(create, admin, [group_read]) == ["NONE"]
    assert await asyncio.to_thread(consume_as_alice, secured, "alice-group") == (5, None)
    assert secured.state()["groups"]["alice-group"]["offsets"] == {TOPIC: {"0": 5}}
