"""The ACL store's decisions, mirroring Kafka's AuthorizerTest and StandardAuthorizerTest (semantics §5.3)."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_emulator.acls import (
    AclBinding,
    AclFilter,
    AclStore,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)

ALLOW, DENY = Permission.ALLOW, Permission.DENY
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
ALICE = "User:alice"


def acl(
    name: str,
    principal: str,
    operation: Operation,
    permission: Permission = ALLOW,
    pattern: PatternType = LITERAL,
    host: str = "*",
    rtype: ResourceType = TOPIC,
) -> AclBinding:
    return AclBinding(rtype, name, pattern, principal, host, operation, permission)


def store_with(*bindings: AclBinding, super_users: tuple[str, ...] = ()) -> AclStore:
    store = AclStore(super_users=super_users, enabled=True)
    for binding in bindings:
        store.add(binding)
    return store


@pytest.fixture
def topic() -> str:
    return f"foo-{uuid.uuid4()}"


def test_disabled_store_allows_everything() -> None:
    store = AclStore()
    store._acls[acl("t", "User:*", Operation.ALL, DENY)] = None
    assert store.authorize("User:x", "1.2.3.4", Operation.DELETE, TOPIC, "t")


def test_topic_acl_hosts_and_implied_describe(topic: str) -> None:
    store = store_with(
        acl(topic, ALICE, Operation.READ, host="192.168.1.1"),
        acl(topic, ALICE, Operation.READ, host="192.168.1.2"),
        acl(topic, ALICE, Operation.READ, DENY, host="192.168.1.1"),
        acl(topic, ALICE, Operation.WRITE, host="192.168.1.1"),
        acl(topic, ALICE, Operation.DESCRIBE),
        acl(topic, "User:rob", Operation.READ),
        acl(topic, "User:batman", Operation.WRITE),
    )

    def check(principal: str, host: str, op: Operation) -> bool:
        return store.authorize(principal, host, op, TOPIC, topic)

    assert check(ALICE, "192.168.1.2", Operation.READ)
    assert not check(ALICE, "192.168.1.1", Operation.READ)
    assert check(ALICE, "192.168.1.1", Operation.WRITE)
    assert not check(ALICE, "192.168.1.2", Operation.WRITE)
    assert check(ALICE, "192.168.1.1", Operation.DESCRIBE)
    assert check(ALICE, "192.168.1.2", Operation.DESCRIBE)
    assert not check(ALICE, "192.168.1.1", Operation.ALTER)
    assert check("User:rob", "192.168.1.1", Operation.DESCRIBE)
    assert check("User:batman", "192.168.1.1", Operation.DESCRIBE)


def test_deny_takes_precedence_and_super_users(topic: str) -> None:
    store = store_with(
        acl("*", "User:*", Operation.ALL),
        acl(topic, ALICE, Operation.ALL, DENY, host="192.168.2.1"),
        super_users=(" User:superuser1", "User:superuser2 "),
    )
    assert not store.authorize(ALICE, "192.168.2.1", Operation.READ, TOPIC, topic)
    assert store.authorize("User:bob", "10.0.0.1", Operation.READ, TOPIC, topic)
    denied_all = store_with(acl("*", "User:*", Operation.ALL, DENY), super_users=("User:superuser1",))
    assert denied_all.authorize("User:superuser1", "1.1.1.1", Operation.READ, TOPIC, topic)
    assert not denied_all.authorize("User:bob", "1.1.1.1", Operation.READ, TOPIC, topic)


def test_super_user_star_is_not_a_wildcard(topic: str) -> None:
    store = store_with(acl("other", ALICE, Operation.READ), super_users=("User:*",))
    assert not store.authorize(ALICE, "1.1.1.1", Operation.READ, TOPIC, topic)


def test_no_acl_found_fails_closed_unless_configured(topic: str) -> None:
    assert not store_with().authorize(ALICE, "1.1.1.1", Operation.READ, TOPIC, topic)
    lenient = AclStore(enabled=True, allow_everyone_if_no_acl_found=True)
    assert lenient.authorize(ALICE, "1.1.1.1", Operation.READ, TOPIC, topic)
    lenient.add(acl("topic1", ALICE, Operation.READ))
    assert not lenient.authorize("User:bob", "1.1.1.1", Operation.READ, TOPIC, "topic1")
    assert lenient.authorize("User:bob", "1.1.1.1", Operation.READ, TOPIC, "topic2")


def test_wildcard_and_prefixed_resources(topic: str) -> None:
    store = store_with(acl("*", ALICE, Operation.READ))
    assert store.authorize(ALICE, "1.1.1.1", Operation.READ, TOPIC, topic)
    store.add(acl(topic, ALICE, Operation.WRITE))
    store.add(acl("*", ALICE, Operation.WRITE, DENY))
    assert not store.authorize(ALICE, "1.1.1.1", Operation.WRITE, TOPIC, topic)
    prefixed = store_with(acl("foo", "User:*", Operation.READ, pattern=PREFIXED))
    assert prefixed.authorize(ALICE, "1.1.1.1", Operation.READ, TOPIC, topic)
    star_prefix = store_with(acl("*", "User:*", Operation.READ, pattern=PREFIXED))
    assert not star_prefix.authorize(ALICE, "1.1.1.1", Operation.READ, TOPIC, topic)


def test_non_matching_denies_are_ignored(topic: str) -> None:
    names = ["a_other", "fooo-" + topic[4:], "fo-" + topic[4:], "fon-", "z_other", f"foo-{uuid.uuid4()}"]
    bindings = [acl(n, "User:*", Operation.READ, DENY, pattern=p) for n in names for p in (LITERAL, PREFIXED)]
    store = store_with(*bindings, acl("foo", "User:*", Operation.READ, pattern=PREFIXED))
    assert store.authorize(ALICE, "1.1.1.1", Operation.READ, TOPIC, topic)


def test_single_character_resources() -> None:
    store = store_with(acl("f", ALICE, Operation.READ), acl("_", ALICE, Operation.READ, pattern=PREFIXED))
    allowed = {
        name: store.authorize(ALICE, "1.1.1.1", Operation.READ, TOPIC, name)
        for name in ("f", "foo", "_foo", "_", "foo_")
    }
    assert allowed == {"f": True, "foo": False, "_foo": True, "_": True, "foo_": False}


def test_empty_group_name() -> None:
    store = store_with(acl("x", ALICE, Operation.READ))
    assert not store.authorize(ALICE, "1.1.1.1", Operation.READ, GROUP, "")
    store.add(acl("*", ALICE, Operation.READ, rtype=GROUP))
    assert store.authorize(ALICE, "1.1.1.1", Operation.READ, GROUP, "")


@pytest.mark.parametrize(
    ("granted", "implied"),
    [
        (Operation.READ, Operation.DESCRIBE),
        (Operation.WRITE, Operation.DESCRIBE),
        (Operation.DELETE, Operation.DESCRIBE),
        (Operation.ALTER, Operation.DESCRIBE),
        (Operation.ALTER_CONFIGS, Operation.DESCRIBE_CONFIGS),
    ],
)
def test_allow_implies_but_deny_does_not(granted: Operation, implied: Operation) -> None:
    allow = store_with(acl("foo_", "User:bob", granted, pattern=PREFIXED))
    assert allow.authorize("User:bob", "1.1.1.1", implied, TOPIC, "foo_1")
    deny = store_with(
        acl("foo_", "User:bob", granted, DENY, pattern=PREFIXED), acl("*", "User:*", Operation.ALL)
    )
    assert deny.authorize("User:bob", "1.1.1.1", implied, TOPIC, "foo_1")
    assert not deny.authorize("User:bob", "1.1.1.1", granted, TOPIC, "foo_1")


def test_create_does_not_imply_describe() -> None:
    store = store_with(acl("foo_", "User:bob", Operation.CREATE, pattern=PREFIXED))
    assert not store.authorize("User:bob", "1.1.1.1", Operation.DESCRIBE, TOPIC, "foo_1")


def test_acl_inheritance_on_cluster() -> None:
    all_ops = [op for op in Operation if op not in (Operation.UNKNOWN, Operation.ANY)]
    store = store_with(acl("kafka-cluster", ALICE, Operation.ALL, rtype=CLUSTER))
    assert all(store.authorize(ALICE, "h", op, CLUSTER, "kafka-cluster") for op in all_ops)
    store.add(acl("kafka-cluster", ALICE, Operation.ALL, DENY, rtype=CLUSTER))
    assert not any(store.authorize(ALICE, "h", op, CLUSTER, "kafka-cluster") for op in all_ops)


def test_deny_precedence_with_operation_all() -> None:
    store = store_with(
        acl("foo", ALICE, Operation.ALL, DENY),
        acl("foo", ALICE, Operation.READ, pattern=PREFIXED),
        acl("foo", "User:*", Operation.ALL, DENY),
        acl("foo", "User:*", Operation.DESCRIBE, pattern=PREFIXED),
    )

    def check(principal: str, op: Operation, name: str) -> bool:
        return store.authorize(principal, "h", op, TOPIC, name)

    assert not check(ALICE, Operation.WRITE, "foo")
    assert not check(ALICE, Operation.READ, "foo")
    assert not check(ALICE, Operation.DESCRIBE, "foo")
    assert check(ALICE, Operation.READ, "foobar")
    assert not check("User:bob", Operation.DESCRIBE, "foo")
    assert check("User:bob", Operation.DESCRIBE, "foobaz")
    assert not check("User:bob", Operation.READ, "foobaz")


def test_host_address_matching() -> None:
    local = "127.0.0.1"
    store = store_with(
        acl("foo", ALICE, Operation.READ, DENY, host="192.168.1.1"),
        acl("foo", ALICE, Operation.READ),
        acl("bar", "User:bob", Operation.READ, host="192.168.1.2"),
        acl("bar", "User:*", Operation.DESCRIBE, host=local),
    )
    cases = {
        (ALICE, local): (True, False, True),
        (ALICE, "192.168.1.1"): (False, False, False),
        (ALICE, "192.168.1.2"): (True, False, False),
        ("User:bob", local): (False, False, True),
        ("User:bob", "192.168.1.1"): (False, False, False),
        ("User:bob", "192.168.1.2"): (False, True, True),
    }
    for (principal, host), expected in cases.items():
        got = (
            store.authorize(principal, host, Operation.READ, TOPIC, "foo"),
            store.authorize(principal, host, Operation.READ, TOPIC, "bar"),
            store.authorize(principal, host, Operation.DESCRIBE, TOPIC, "bar"),
        )
        assert got == expected, (principal, host)


def test_other_principal_types_need_exact_match() -> None:
    store = store_with(acl("t", "Group:*", Operation.READ), acl("t", "User:*", Operation.WRITE))
    assert not store.authorize("Group:ops", "h", Operation.READ, TOPIC, "t")
    assert store.authorize("Group:ops", "h", Operation.WRITE, TOPIC, "t")


def test_super_user_parsing_rejects_malformed_entries() -> None:
    assert AclStore(super_users=[" ", "  User:bob  ", "User:alice "]).super_users == {
        "User:bob",
        "User:alice",
    }
    with pytest.raises(ValueError, match="principalType:principalName but got bob"):
        AclStore(super_users=["bob", ":alice"])


@pytest.mark.parametrize(
    ("binding", "reason"),
    [
        (acl("", ALICE, Operation.READ), "empty resource name"),
        (acl("t", ALICE, Operation.ANY), "Invalid operation"),
        (acl("t", ALICE, Operation.READ, Permission.ANY), "Invalid permissionType"),
        (acl("t", ALICE, Operation.READ, pattern=PatternType.MATCH), "Invalid patternType"),
        (acl("t", ALICE, Operation.READ, rtype=ResourceType.ANY), "Invalid resource type"),
        (acl("other", ALICE, Operation.ALTER, rtype=CLUSTER), "only valid name"),
        (acl("t", "alice", Operation.READ), "principal"),
    ],
)
def test_invalid_bindings_are_refused(binding: AclBinding, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        AclStore().add(binding)


def test_filters_any_match_and_exact() -> None:
    store = store_with(
        acl("foo", ALICE, Operation.READ),
        acl("fo", ALICE, Operation.READ, pattern=PREFIXED),
        acl("*", ALICE, Operation.WRITE),
        acl("bar", "User:bob", Operation.READ, DENY),
    )
    names = lambda f: sorted((a.name, a.pattern_type.name) for a in store.find(f))  # noqa: E731
    assert names(AclFilter(name="foo", pattern_type=PatternType.MATCH)) == [
        ("*", "LITERAL"),
        ("fo", "PREFIXED"),
        ("foo", "LITERAL"),
    ]
    assert names(AclFilter(name="foo", pattern_type=PatternType.ANY)) == [("foo", "LITERAL")]
    assert names(AclFilter(name="fo", pattern_type=PREFIXED)) == [("fo", "PREFIXED")]
    assert names(AclFilter(principal="User:bob")) == [("bar", "LITERAL")]
    assert names(AclFilter(operation=Operation.WRITE)) == [("*", "LITERAL")]
    assert names(AclFilter(permission=DENY, resource_type=GROUP)) == []
    assert len(store.remove(AclFilter(principal=ALICE))) == 3
    assert [a.name for a in store.bindings()] == ["bar"]


operations = st.sampled_from([op for op in Operation if op not in (Operation.UNKNOWN, Operation.ANY)])
bindings = st.builds(
    acl,
    name=st.sampled_from(["t", "t1", "*", "x"]),
    principal=st.sampled_from([ALICE, "User:*", "User:bob"]),
    operation=operations,
    permission=st.sampled_from([ALLOW, DENY]),
    pattern=st.sampled_from([LITERAL, PREFIXED]),
    host=st.sampled_from(["*", "10.0.0.1", "10.0.0.2"]),
)


@given(st.lists(bindings, max_size=8), bindings)
def test_adding_a_deny_never_grants(existing: list[AclBinding], extra: AclBinding) -> None:
    store = store_with(*existing)
    deny = AclBinding(
        TOPIC, extra.name, extra.pattern_type, extra.principal, extra.host, extra.operation, DENY
    )
    questions = [
        (principal, host, op, name)
        for principal in (ALICE, "User:bob")
        for host in ("10.0.0.1", "10.0.0.2")
        for op in (Operation.READ, Operation.DESCRIBE, Operation.DELETE)
        for name in ("t", "t1", "x")
    ]
    before = {q: store.authorize(q[0], q[1], q[2], TOPIC, q[3]) for q in questions}
    store.add(deny)
    for q in questions:
        assert before[q] or not store.authorize(q[0], q[1], q[2], TOPIC, q[3])
