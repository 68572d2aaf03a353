"""DescribeAcls responses decoded into bindings, and the TTL cache of ``acl_source: kafka``."""

from __future__ import annotations

from io import BytesIO
from typing import Any

import pytest
from aiokafka.protocol.admin import DescribeAclsResponse_v0, DescribeAclsResponse_v1

from app.adapters.kafka.cluster_acls import AclReadFailed, describe_all_request, read_bindings
from app.auth.acl_sources import KafkaAclSource
from app.domain.acl import AclBinding, Operation, PatternType, Permission, ResourceType
from app.errors import ServiceUnavailable
from app.settings import ClusterSettings

ALICE_ORDERS = AclBinding(
    "User:alice", "*", Operation.DELETE, Permission.ALLOW, ResourceType.TOPIC, "orders.", PatternType.PREFIXED
)


def _wire(response: Any) -> Any:
    """The response as a client decodes it from the bytes a broker sends."""
    return type(response).decode(BytesIO(response.encode()))


def test_every_binding_of_a_v1_response_is_read() -> None:
    response = DescribeAclsResponse_v1(
        0,
        0,
        None,
        [
            (2, "orders.", 4, [("User:alice", "*", 6, 3), ("Group:ops", "10.0.0.1", 2, 2)]),
            (4, "kafka-cluster", 3, [("User:auditor", "*", 8, 3)]),
        ],
    )

    assert read_bindings(_wire(response)) == [
        ALICE_ORDERS,
        AclBinding(
            "Group:ops",
            "10.0.0.1",
            Operation.ALL,
            Permission.DENY,
            ResourceType.TOPIC,
            "orders.",
            PatternType.PREFIXED,
        ),
        AclBinding(
            "User:auditor",
            "*",
            Operation.DESCRIBE,
            Permission.ALLOW,
            ResourceType.CLUSTER,
            "kafka-cluster",
            PatternType.LITERAL,
        ),
    ]


def test_v0_bindings_are_literal_and_unusable_ones_are_skipped() -> None:
    response = DescribeAclsResponse_v0(
        0,
        0,
        None,
        [
            (2, "payments", [("User:bob", "*", 3, 3), ("User:bob", "*", 0, 3)]),
            (5, "tx-1", [("User:bob", "*", 4, 3)]),  # TRANSACTIONAL_ID: not decided on here
            (3, "billing", [("bob", "*", 3, 3)]),  # not Type:Name
        ],
    )

    assert read_bindings(_wire(response)) == [
        AclBinding(
            "User:bob",
            "*",
            Operation.READ,
            Permission.ALLOW,
            ResourceType.TOPIC,
            "payments",
            PatternType.LITERAL,
        )
    ]


def test_a_response_error_is_raised() -> None:
    response = DescribeAclsResponse_v1(0, 31, "Cluster authorization failed.", [])
    with pytest.raises(AclReadFailed, match="CLUSTER_AUTHORIZATION_FAILED"):
        read_bindings(_wire(response))


def test_the_request_asks_for_everything() -> None:
    struct = describe_all_request().build(describe_all_request()._CLASSES[-1])
    assert struct.API_VERSION == 1
    assert (struct.resource_type, struct.resource_pattern_type_filter, struct.operation) == (1, 1, 1)
    assert (struct.resource_name, struct.principal, struct.host, struct.permission_type) == (
        None,
        None,
        None,
        1,
    )


class Reader:
    def __init__(self) -> None:
        self.bindings = [ALICE_ORDERS]
        self.calls = 0
        self.fail = False

    async def describe_acls(self, cluster: str) -> list[AclBinding]:
        self.calls += 1
        if self.fail:
            raise AclReadFailed("CLUSTER_AUTHORIZATION_FAILED")
        return list(self.bindings)


async def test_bindings_are_kept_for_the_cache_time_then_read_again() -> None:
    now = [100.0]
    reader = Reader()
    clusters = {"demo": ClusterSettings(bootstrap_servers="x:9092", acl_source="kafka", acl_cache_seconds=10)}
    source = KafkaAclSource(reader, clusters, frozenset({"User:admin"}), clock=lambda: now[0])

    first = await source.authorizer("demo")
    reader.bindings = []
    now[0] += 9.9
    assert await source.authorizer("demo") is first
    assert reader.calls == 1
    now[0] += 0.2
    refreshed = await source.authorizer("demo")
    assert reader.calls == 2
    assert len(refreshed) == 0
    assert refreshed.super_users == {"User:admin"}


async def test_an_unreadable_cluster_fails_closed() -> None:
    reader = Reader()
    reader.fail = True
    clusters = {"demo": ClusterSettings(bootstrap_servers="x:9092", acl_source="kafka")}
    source = KafkaAclSource(reader, clusters, frozenset())
    with pytest.raises(ServiceUnavailable):
        await source.authorizer("demo")
