"""Kafka's own authorizer cases (kafka-semantics.md §5.3), named after the upstream tests, plus callers
holding several principals and what a Decision reports.

Upstream fixtures: super users ``User:superuser1; User:superuser2``, caller ``User:alice`` from
192.168.0.1, resource TOPIC ``foo-<uuid>`` (AuthorizerTest); ``User:superman`` (StandardAuthorizerTest).
"""

from __future__ import annotations

import uuid

import pytest

from app.domain.acl import (
    CLUSTER_RESOURCE_NAME,
    AclBinding,
    AclValidationError,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)
from app.domain.authorizer import Authorizer, Decision, parse_kafka_bool, parse_super_users

ALICE = "User:alice"
BOB = "User:bob"
EVERYONE = "User:*"
LITERAL = PatternType.LITERAL
PREFIXED = PatternType.PREFIXED
TOPIC = ResourceType.TOPIC
GROUP = ResourceType.GROUP
CLUSTER = ResourceType.CLUSTER
R, W, D = Operation.READ, Operation.WRITE, Operation.DESCRIBE
SUPER_USERS = parse_super_users("User:superuser1; User:superuser2")
HOST1, HOST2 = "192.168.1.1", "192.168.1.2"
LOCAL = "127.0.0.1"
# Every operation a caller can ask for, ALL included: what "all 12 ops" of testAclInheritance ranges over.
OPERATIONS = list(Operation)


def acl(
    permission: Permission,
    principal: str,
    operation: Operation,
    name: str,
    *,
    host: str = "*",
    pattern: PatternType = LITERAL,
    resource_type: ResourceType = TOPIC,
) -> AclBinding:
    return AclBinding(principal, host, operation, permission, resource_type, name, pattern)


def allow(
    principal: str,
    operation: Operation,
    name: str,
    *,
    host: str = "*",
    pattern: PatternType = LITERAL,
    resource_type: ResourceType = TOPIC,
) -> AclBinding:
    return acl(
        Permission.ALLOW, principal, operation, name, host=host, pattern=pattern, resource_type=resource_type
    )


def deny(
    principal: str,
    operation: Operation,
    name: str,
    *,
    host: str = "*",
    pattern: PatternType = LITERAL,
    resource_type: ResourceType = TOPIC,
) -> AclBinding:
    return acl(
        Permission.DENY, principal, operation, name, host=host, pattern=pattern, resource_type=resource_type
    )


def ok(
    authorizer: Authorizer,
    principal: str | list[str],
    operation: Operation,
    name: str,
    *,
    host: str = "192.168.0.1",
    resource_type: ResourceType = TOPIC,
) -> bool:
    principals = [principal] if isinstance(principal, str) else principal
    return authorizer.authorize(principals, host, operation, resource_type, name).allowed


@pytest.fixture
def topic() -> str:
    return f"foo-{uuid.uuid4()}"


def test_topic_acl(topic: str) -> None:
    authorizer = Authorizer(
        [
            allow(ALICE, R, topic, host=HOST1),
            allow(ALICE, R, topic, host=HOST2),
            deny(ALICE, R, topic, host=HOST1),
            allow(ALICE, W, topic, host=HOST1),
            allow(ALICE, D, topic),
            allow("User:rob", R, topic),
            allow("User:batman", W, topic),
        ],
        SUPER_USERS,
    )
    assert ok(authorizer, ALICE, R, topic, host=HOST2)
    assert not ok(authorizer, ALICE, R, topic, host=HOST1)
    assert ok(authorizer, ALICE, W, topic, host=HOST1)
    assert not ok(authorizer, ALICE, W, topic, host=HOST2)
    assert ok(authorizer, ALICE, D, topic, host=HOST1)
    assert ok(authorizer, ALICE, D, topic, host=HOST2)
    assert not ok(authorizer, ALICE, Operation.ALTER, topic, host=HOST1)
    assert not ok(authorizer, ALICE, Operation.ALTER, topic, host=HOST2)
    assert ok(authorizer, "User:rob", D, topic, host=HOST1)
    assert ok(authorizer, "User:batman", D, topic, host=HOST1)
    assert ok(authorizer, "User:rob", R, topic, host=HOST1)
    assert ok(authorizer, "User:batman", W, topic, host=HOST1)


class CustomPrincipal(str):
    """Like Kafka's CustomPrincipal: equal to nothing, so only a comparison by type and name can match."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


def test_allow_access_with_custom_principal(topic: str) -> None:
    authorizer = Authorizer([deny(ALICE, R, topic, host=HOST1), allow(ALICE, R, topic, host=HOST2)])
    custom = CustomPrincipal(ALICE)
    assert ok(authorizer, custom, R, topic, host=HOST2)
    assert not ok(authorizer, custom, R, topic, host=HOST1)


def test_deny_takes_precedence(topic: str) -> None:
    authorizer = Authorizer(
        [allow(EVERYONE, Operation.ALL, topic), deny(ALICE, Operation.ALL, topic, host="192.168.2.1")]
    )
    assert not ok(authorizer, ALICE, R, topic, host="192.168.2.1")


def test_allow_all_access(topic: str) -> None:
    authorizer = Authorizer([allow(EVERYONE, Operation.ALL, topic)])
    assert ok(authorizer, "User:random", R, topic, host="192.0.4.4")


def test_super_user_has_access(topic: str) -> None:
    authorizer = Authorizer([deny(EVERYONE, Operation.ALL, topic)], SUPER_USERS)
    assert ok(authorizer, "User:superuser1", R, topic, host="192.0.4.4")
    assert ok(authorizer, "User:superuser2", R, topic, host="192.0.4.4")
    assert not ok(authorizer, ALICE, R, topic, host="192.0.4.4")


def test_super_user_with_custom_principal_has_access(topic: str) -> None:
    authorizer = Authorizer([deny(EVERYONE, Operation.ALL, topic)], SUPER_USERS)
    assert ok(authorizer, CustomPrincipal("User:superuser1"), R, topic, host="192.0.4.4")


def test_wild_card_acls(topic: str) -> None:
    host = "192.168.3.1"
    authorizer = Authorizer([], SUPER_USERS)
    assert not ok(authorizer, ALICE, R, topic, host=host)
    authorizer = authorizer.with_changes(added=[allow(ALICE, R, "*", host=host)])
    assert ok(authorizer, ALICE, R, topic, host=host)
    authorizer = authorizer.with_changes(added=[allow(ALICE, W, topic, host=host)])
    assert ok(authorizer, ALICE, W, topic, host=host)
    authorizer = authorizer.with_changes(added=[deny(ALICE, W, "*", host=host)])
    assert not ok(authorizer, ALICE, W, topic, host=host)


def test_no_acl_found(topic: str) -> None:
    assert not ok(Authorizer([], SUPER_USERS), ALICE, R, topic)


@pytest.mark.parametrize("setting", ["true", " true", "true ", " TRUE "])
def test_no_acl_found_override_and_acl_config_with_whitespace(topic: str, setting: str) -> None:
    authorizer = Authorizer([], SUPER_USERS, allow_everyone_if_no_acl_found=parse_kafka_bool(setting))
    assert ok(authorizer, ALICE, R, topic)


def test_acl_config_not_true_is_false() -> None:
    assert not parse_kafka_bool("yes")
    assert not parse_kafka_bool("")


def _cluster_grants(bindings: list[AclBinding]) -> set[Operation]:
    authorizer = Authorizer(bindings)
    return {
        op for op in OPERATIONS if ok(authorizer, ALICE, op, CLUSTER_RESOURCE_NAME, resource_type=CLUSTER)
    }


@pytest.mark.parametrize(
    ("parent", "implied"),
    [
        (Operation.ALL, set(OPERATIONS)),
        (Operation.READ, {R, D}),
        (Operation.WRITE, {W, D}),
        (Operation.DELETE, {Operation.DELETE, D}),
        (Operation.ALTER, {Operation.ALTER, D}),
        (Operation.ALTER_CONFIGS, {Operation.ALTER_CONFIGS, Operation.DESCRIBE_CONFIGS}),
        (Operation.CREATE, {Operation.CREATE}),
        (Operation.DESCRIBE, {D}),
    ],
)
def test_acl_inheritance_of_allow(parent: Operation, implied: set[Operation]) -> None:
    grant = allow(ALICE, parent, CLUSTER_RESOURCE_NAME, resource_type=CLUSTER)
    assert _cluster_grants([grant]) == implied


@pytest.mark.parametrize(
    ("parent", "denied"),
    [
        (Operation.ALL, set(OPERATIONS)),
        (Operation.DESCRIBE, {D}),
        (Operation.DESCRIBE_CONFIGS, {Operation.DESCRIBE_CONFIGS}),
        (Operation.READ, {R}),
    ],
)
def test_acl_inheritance_of_deny(parent: Operation, denied: set[Operation]) -> None:
    bindings = [
        allow(ALICE, Operation.ALL, CLUSTER_RESOURCE_NAME, resource_type=CLUSTER),
        deny(ALICE, parent, CLUSTER_RESOURCE_NAME, resource_type=CLUSTER),
    ]
    assert _cluster_grants(bindings) == set(OPERATIONS) - denied


def test_access_allowed_if_allow_acl_exists_on_wildcard_resource(topic: str) -> None:
    assert ok(Authorizer([allow(EVERYONE, R, "*")]), ALICE, R, topic)


def test_access_allowed_if_allow_acl_exists_on_prefixed_resource(topic: str) -> None:
    assert ok(Authorizer([allow(EVERYONE, R, "foo", pattern=PREFIXED)]), ALICE, R, topic)


def test_authorize_with_prefixed_resource(topic: str) -> None:
    other = uuid.uuid4()
    near_misses = [
        ("a_other", LITERAL),
        ("a_other", PREFIXED),
        (f"foo-{other}", PREFIXED),
        (f"foo-{other}", LITERAL),
        (f"foo-{other}-zzz", PREFIXED),
        (f"fooo-{other}", PREFIXED),
        (f"fo-{other}", PREFIXED),
        (f"fop-{other}", PREFIXED),
        (f"fon-{other}", PREFIXED),
        ("fon-", PREFIXED),
        ("z_other", PREFIXED),
        ("z_other", LITERAL),
    ]
    bindings = [deny(ALICE, R, name, pattern=pattern) for name, pattern in near_misses]
    authorizer = Authorizer([*bindings, allow(ALICE, R, "foo", pattern=PREFIXED)])
    assert ok(authorizer, ALICE, R, topic)


def test_single_character_resource_acls() -> None:
    authorizer = Authorizer([allow(ALICE, R, "f")])
    assert ok(authorizer, ALICE, R, "f")
    assert not ok(authorizer, ALICE, R, "foo")
    authorizer = authorizer.with_changes(added=[allow(ALICE, R, "_", pattern=PREFIXED)])
    assert ok(authorizer, ALICE, R, "_foo")
    assert ok(authorizer, ALICE, R, "_")
    assert not ok(authorizer, ALICE, R, "foo_")


def test_authorize_with_empty_resource_name() -> None:
    assert not ok(Authorizer([]), ALICE, R, "", resource_type=GROUP)
    authorizer = Authorizer([allow(ALICE, R, "*", resource_type=GROUP)])
    assert ok(authorizer, ALICE, R, "", resource_type=GROUP)


def test_empty_acl_throws_exception() -> None:
    with pytest.raises(AclValidationError, match="resource_name"):
        allow(ALICE, R, "", resource_type=GROUP)


def test_get_configured_super_users() -> None:
    assert parse_super_users(" ") == frozenset()
    assert parse_super_users(";  User:bob  ;  User:alice ") == {"User:bob", "User:alice"}
    message = "expected a string in format principalType:principalName but got bob"
    with pytest.raises(AclValidationError, match=message):
        parse_super_users("bob;:alice")


@pytest.mark.parametrize("enabled", [True, False])
def test_allow_everyone_if_no_acl_found_config(enabled: bool) -> None:
    authorizer = Authorizer([allow("User:Alice", R, "topic1")], {"User:alice", "User:chris"}, enabled)
    assert not ok(authorizer, "User:Bob", R, "topic1")
    assert ok(authorizer, "User:Bob", R, "topic2") is enabled
    # Principal names are case-sensitive: User:alice is a super user, User:Alice only holds the binding.
    assert ok(authorizer, "User:Alice", R, "topic1")
    assert not ok(authorizer, "User:Alice", W, "topic1")


def _foo_acl(operation: Operation, permission: Permission) -> Authorizer:
    return Authorizer([acl(permission, BOB, operation, "foo_", pattern=PREFIXED)], {"User:superman"})


def test_find_result_implication() -> None:
    for op in (D, R, W, Operation.DELETE, Operation.ALTER):
        assert ok(_foo_acl(op, Permission.ALLOW), BOB, D, "foo_bar")
    assert not ok(_foo_acl(Operation.CREATE, Permission.ALLOW), BOB, D, "foo_bar")
    for op in (R, W, Operation.DELETE, Operation.ALTER):
        denying = _foo_acl(op, Permission.DENY).with_changes(added=[allow(BOB, D, "foo_bar")])
        assert ok(denying, BOB, D, "foo_bar")
    assert not ok(
        _foo_acl(D, Permission.DENY).with_changes(added=[allow(BOB, D, "foo_bar")]), BOB, D, "foo_bar"
    )
    for op in (Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS):
        assert ok(_foo_acl(op, Permission.ALLOW), BOB, Operation.DESCRIBE_CONFIGS, "foo_bar")
    denying = _foo_acl(Operation.ALTER_CONFIGS, Permission.DENY)
    denying = denying.with_changes(added=[allow(BOB, Operation.DESCRIBE_CONFIGS, "foo_bar")])
    assert ok(denying, BOB, Operation.DESCRIBE_CONFIGS, "foo_bar")
    assert not ok(denying, BOB, Operation.ALTER_CONFIGS, "foo_bar")


def test_find_result_principal_matching() -> None:
    assert ok(_foo_acl(R, Permission.ALLOW), BOB, R, "foo_bar")
    assert not ok(_foo_acl(R, Permission.ALLOW), ALICE, R, "foo_bar")
    bar = Authorizer(
        [deny(EVERYONE, R, "bar", resource_type=GROUP), allow(ALICE, R, "bar", resource_type=GROUP)]
    )
    decision = bar.authorize([ALICE], LOCAL, R, GROUP, "bar")
    assert not decision.allowed
    assert decision.matched_binding is not None
    assert decision.matched_binding.principal == EVERYONE


def test_deny_precedence_with_operation_all() -> None:
    authorizer = Authorizer(
        [
            deny(ALICE, Operation.ALL, "foo"),
            allow(ALICE, R, "foo", pattern=PREFIXED),
            deny(EVERYONE, Operation.ALL, "foo"),
            allow(EVERYONE, D, "foo", pattern=PREFIXED),
        ],
        {"User:superman"},
    )
    assert [
        ok(authorizer, ALICE, op, name) for op, name in [(W, "foo"), (R, "foo"), (D, "foo"), (R, "foobar")]
    ] == [
        False,
        False,
        False,
        True,
    ]
    bob_asks = [(D, "foo"), (R, "foo"), (W, "foo"), (D, "foobaz"), (R, "foobaz")]
    assert [ok(authorizer, BOB, op, name) for op, name in bob_asks] == [False, False, False, True, False]


def test_topic_acl_with_operation_all() -> None:
    authorizer = Authorizer(
        [
            allow(EVERYONE, Operation.ALL, "foo"),
            allow(ALICE, Operation.ALL, "bar", pattern=PREFIXED),
            allow(BOB, Operation.ALL, "baz"),
        ]
    )
    alice_asks = [(W, "foo"), (Operation.DESCRIBE_CONFIGS, "bar"), (D, "baz")]
    assert [ok(authorizer, ALICE, op, name) for op, name in alice_asks] == [True, True, False]
    assert [ok(authorizer, BOB, op, name) for op, name in [(W, "foo"), (R, "bar"), (D, "baz")]] == [
        True,
        False,
        True,
    ]
    malory_asks = [(D, "foo"), (W, "bar"), (R, "baz")]
    assert [ok(authorizer, "User:malory", op, name) for op, name in malory_asks] == [True, False, False]


@pytest.mark.parametrize(
    ("principal", "host", "expected"),
    [
        (ALICE, LOCAL, [True, False, True]),
        (ALICE, HOST1, [False, False, False]),
        (ALICE, HOST2, [True, False, False]),
        (BOB, LOCAL, [False, False, True]),
        (BOB, HOST1, [False, False, False]),
        (BOB, HOST2, [False, True, True]),
    ],
)
def test_host_address_acl_validation(principal: str, host: str, expected: list[bool]) -> None:
    authorizer = Authorizer(
        [
            deny(ALICE, R, "foo", host=HOST1),
            allow(ALICE, R, "foo"),
            allow(BOB, R, "bar", host=HOST2),
            allow(EVERYONE, D, "bar", host=LOCAL),
        ]
    )
    actions = [(R, "foo"), (R, "bar"), (D, "bar")]
    assert [ok(authorizer, principal, op, name, host=host) for op, name in actions] == expected


def test_authorization_with_many_acls() -> None:
    authorizer = Authorizer(
        [
            allow(EVERYONE, R, "green2"),
            allow(BOB, R, "green", pattern=PREFIXED),
            allow(BOB, R, "betamax4"),
            allow(BOB, R, "betamax"),
            allow(EVERYONE, R, "beta", pattern=PREFIXED),
            allow(EVERYONE, R, "alpha", pattern=PREFIXED),
            deny(BOB, R, "alp", pattern=PREFIXED),
            allow(BOB, W, "*", resource_type=GROUP),
            deny(EVERYONE, W, "wheel", resource_type=GROUP),
        ],
        {"User:superman"},
    )
    assert ok(authorizer, BOB, R, "green1")
    assert not ok(authorizer, BOB, W, "wheel", resource_type=GROUP)
    assert not ok(authorizer, BOB, R, "alpha")
    assert ok(authorizer, BOB, W, "arbitrary", resource_type=GROUP)
    assert not ok(authorizer, BOB, R, "ala")
    assert ok(authorizer, "User:superman", W, "wheel", resource_type=GROUP)


def test_prefix_acls() -> None:
    authorizer = Authorizer(
        [
            allow(ALICE, Operation.ALL, "fooa", pattern=PREFIXED),
            allow(BOB, Operation.ALL, "foobar"),
            allow(BOB, Operation.ALL, "f", pattern=PREFIXED),
        ]
    )
    assert [ok(authorizer, BOB, op, name) for op, name in [(W, "foobarr"), (R, "goobar"), (R, "fooa")]] == [
        True,
        False,
        True,
    ]
    assert [ok(authorizer, ALICE, op, name) for op, name in [(D, "fooa"), (W, "bar"), (R, "baz")]] == [
        True,
        False,
        False,
    ]


@pytest.mark.parametrize(
    ("bindings", "expected"),
    [
        ([], False),
        ([allow(ALICE, D, "orders")], False),
        ([allow(ALICE, Operation.ALTER, "orders")], False),
        ([allow(ALICE, Operation.DELETE, "*")], True),
        ([allow(ALICE, Operation.ALL, "ord", pattern=PREFIXED)], True),
        ([allow(ALICE, Operation.DELETE, "*"), deny(ALICE, D, "orders")], True),
        (
            [allow(ALICE, Operation.DELETE, "*"), deny(EVERYONE, Operation.DELETE, "o", pattern=PREFIXED)],
            False,
        ),
    ],
)
def test_delete_records_needs_delete_on_topic(bindings: list[AclBinding], expected: bool) -> None:
    assert ok(Authorizer(bindings), ALICE, Operation.DELETE, "orders") is expected


# A caller holding several principals: allowed if any is allowed and none is denied.

PAYMENTS = "Group:payments"


def test_group_principal_grants_to_its_member() -> None:
    authorizer = Authorizer([allow(PAYMENTS, Operation.DELETE, "payments.", pattern=PREFIXED)])
    assert ok(authorizer, [ALICE, PAYMENTS], Operation.DELETE, "payments.refunds")
    assert not ok(authorizer, [ALICE], Operation.DELETE, "payments.refunds")
    assert not ok(authorizer, [ALICE, "Group:ops"], Operation.DELETE, "payments.refunds")


def test_any_denied_principal_denies_the_caller() -> None:
    authorizer = Authorizer(
        [allow(ALICE, Operation.DELETE, "ledger"), deny(PAYMENTS, Operation.DELETE, "ledger")]
    )
    assert ok(authorizer, [ALICE], Operation.DELETE, "ledger")
    decision = authorizer.authorize([ALICE, PAYMENTS], LOCAL, Operation.DELETE, TOPIC, "ledger")
    assert not decision.allowed
    assert decision.matched_binding == deny(PAYMENTS, Operation.DELETE, "ledger")


def test_user_wildcard_matches_every_principal_type_but_group_wildcard_is_literal() -> None:
    authorizer = Authorizer([allow(EVERYONE, R, "shared"), allow("Group:*", W, "shared")])
    assert ok(authorizer, [PAYMENTS], R, "shared")
    assert not ok(authorizer, [PAYMENTS], W, "shared")
    assert ok(authorizer, ["Group:*"], W, "shared")


def test_super_user_among_principals_is_allowed_despite_a_group_deny() -> None:
    authorizer = Authorizer([deny(PAYMENTS, Operation.ALL, "*")], {"User:admin"})
    decision = authorizer.authorize([PAYMENTS, "User:admin"], LOCAL, Operation.DELETE, TOPIC, "x")
    assert decision == Decision(True, "super user User:admin", None)


def test_super_user_wildcard_is_not_a_wildcard() -> None:
    authorizer = Authorizer([allow(ALICE, R, "other")], {"User:*"})
    assert not ok(authorizer, ALICE, R, "x")


@pytest.mark.parametrize("principals", [[], "User:alice"])
def test_principals_must_be_a_non_empty_sequence(principals: list[str]) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        Authorizer([]).authorize(principals, LOCAL, R, TOPIC, "x")


def test_invalid_super_user_is_refused() -> None:
    with pytest.raises(AclValidationError, match="principalType:principalName"):
        Authorizer([], {"admin"})


# What a Decision reports.


def test_decision_reasons() -> None:
    grant = allow(ALICE, Operation.DELETE, "orders.", pattern=PREFIXED)
    block = deny(ALICE, Operation.DELETE, "orders.secret")
    authorizer = Authorizer([grant, block], {"User:admin"})
    allowed = authorizer.authorize([ALICE], LOCAL, Operation.DELETE, TOPIC, "orders.eu")
    assert allowed.matched_binding == grant
    assert allowed.reason == "allowed by ALLOW DELETE on TOPIC:PREFIXED:orders. for User:alice from *"
    denied = authorizer.authorize([ALICE], LOCAL, Operation.DELETE, TOPIC, "orders.secret")
    assert (denied.allowed, denied.matched_binding) == (False, block)
    assert denied.reason.startswith("denied by DENY DELETE on TOPIC:LITERAL:orders.secret")
    unmatched = authorizer.authorize([BOB], LOCAL, Operation.DELETE, TOPIC, "orders.eu")
    assert (unmatched.allowed, unmatched.reason, unmatched.matched_binding) == (
        False,
        "no matching ALLOW binding",
        None,
    )
    no_acl = authorizer.authorize([ALICE], LOCAL, Operation.DELETE, TOPIC, "billing")
    assert (no_acl.allowed, no_acl.reason) == (False, "no ACL found, allow_everyone_if_no_acl_found=false")


def test_resource_types_are_separate() -> None:
    authorizer = Authorizer([allow(ALICE, R, "orders", resource_type=GROUP)])
    assert ok(authorizer, ALICE, R, "orders", resource_type=GROUP)
    assert not ok(authorizer, ALICE, R, "orders", resource_type=TOPIC)


def test_prefixed_wildcard_is_an_ordinary_prefix() -> None:
    authorizer = Authorizer([allow(ALICE, R, "*", pattern=PREFIXED)])
    assert not ok(authorizer, ALICE, R, "orders")
    assert ok(authorizer, ALICE, R, "*orders")


def test_with_changes_removes_then_adds() -> None:
    first, second = allow(ALICE, R, "a"), allow(BOB, R, "a")
    authorizer = Authorizer([first, first, second])
    assert len(authorizer) == 2
    changed = authorizer.with_changes(added=[deny(ALICE, R, "a")], removed=[second])
    assert changed.bindings == (first, deny(ALICE, R, "a"))
    assert not ok(changed, ALICE, R, "a")
    assert ok(authorizer, ALICE, R, "a")
