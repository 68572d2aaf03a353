"""DescribeAcls / CreateAcls / DeleteAcls handlers: request validation and filter semantics (no sockets)."""

from __future__ import annotations

from kafka_emulator.acls import AclStore, register_acl_handlers
from kafka_emulator.protocol.api import HandlerRegistry, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31
TOPIC, GROUP, ANY_TYPE = 2, 3, 1
LITERAL, PREFIXED, MATCH, ANY_PATTERN = 3, 4, 2, 1
READ, WRITE, ANY_OP = 3, 4, 1
ALLOW, DENY, ANY_PERMISSION = 3, 2, 1


async def call(
    store: AclStore, key: int, request: Message, principal: str = "User:admin", version: int = 2
) -> Message:
    registry = HandlerRegistry()
    register_acl_handlers(registry, store, store)
    handler = registry.get(key)
    assert handler is not None
    return await handler(RequestContext(1, key, version, 1, "c", principal, "10.0.0.9"), request)


def creation(name: str, pattern: int = LITERAL, operation: int = READ, permission: int = ALLOW) -> Message:
    return {
        "ResourceType": TOPIC,
        "ResourceName": name,
        "ResourcePatternType": pattern,
        "Principal": "User:alice",
        "Host": "*",
        "Operation": operation,
        "PermissionType": permission,
    }


def acl_filter(name: str | None = None, pattern: int = ANY_PATTERN, operation: int = ANY_OP) -> Message:
    return {
        "ResourceTypeFilter": ANY_TYPE,
        "ResourceNameFilter": name,
        "PatternTypeFilter": pattern,
        "PrincipalFilter": None,
        "HostFilter": None,
        "Operation": operation,
        "PermissionType": ANY_PERMISSION,
    }


async def test_create_validates_each_binding() -> None:
    store = AclStore(super_users=["User:admin"], enabled=True)
    creations = [
        creation("orders"),
        creation("o", PREFIXED),
        creation("x", MATCH),
        creation("y", operation=99),
    ]
    results = (await call(store, CREATE_ACLS, {"Creations": creations}))["Results"]
    assert [r["ErrorCode"] for r in results] == [0, 0, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]
    again = (await call(store, CREATE_ACLS, {"Creations": [creation("orders")]}))["Results"]
    assert again[0]["ErrorCode"] == 0
    assert len(store.bindings()) == 2  # re-creating an existing binding is a no-op


async def test_describe_groups_by_resource_and_match_filter() -> None:
    store = AclStore(super_users=["User:admin"], enabled=True)
    creations = [
        creation("orders"),
        creation("orders", operation=WRITE),
        creation("ord", PREFIXED),
        creation("zz"),
    ]
    await call(store, CREATE_ACLS, {"Creations": creations})
    described = await call(store, DESCRIBE_ACLS, acl_filter("orders", MATCH))
    assert described["ErrorCode"] == 0
    resources = {(r["ResourceName"], r["PatternType"]): len(r["Acls"]) for r in described["Resources"]}
    assert resources == {("orders", LITERAL): 2, ("ord", PREFIXED): 1}
    unknown = await call(store, DESCRIBE_ACLS, acl_filter(operation=0))
    assert unknown["ErrorCode"] == ErrorCode.INVALID_REQUEST


async def test_delete_reports_matches_per_filter() -> None:
    store = AclStore(super_users=["User:admin"], enabled=True)
    await call(
        store, CREATE_ACLS, {"Creations": [creation("orders"), creation("ord", PREFIXED), creation("zz")]}
    )
    filters = [acl_filter("orders", LITERAL), acl_filter(pattern=0), acl_filter("nothing")]
    results = (await call(store, DELETE_ACLS, {"Filters": filters}))["FilterResults"]
    assert [r["ErrorCode"] for r in results] == [0, ErrorCode.INVALID_REQUEST, 0]
    assert [m["ResourceName"] for m in results[0]["MatchingAcls"]] == ["orders"]
    assert results[2]["MatchingAcls"] == []
    assert sorted(b.name for b in store.bindings()) == ["ord", "zz"]


async def test_cluster_permission_and_disabled_authorizer() -> None:
    store = AclStore(super_users=["User:admin"], enabled=True)
    denied = await call(store, CREATE_ACLS, {"Creations": [creation("t")]}, principal="User:alice")
    assert denied["Results"][0]["ErrorCode"] == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    filters = {"Filters": [acl_filter()]}
    deleted = await call(store, DELETE_ACLS, filters, principal="User:alice")
    assert deleted["FilterResults"][0]["ErrorCode"] == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    disabled = AclStore()
    assert (await call(disabled, DESCRIBE_ACLS, acl_filter()))["ErrorCode"] == ErrorCode.SECURITY_DISABLED
    assert (await call(disabled, DELETE_ACLS, filters))["FilterResults"][0][
        "ErrorCode"
    ] == ErrorCode.SECURITY_DISABLED
