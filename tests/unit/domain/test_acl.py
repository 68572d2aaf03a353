"""ACL value types: Kafka's validation of new bindings, its filter semantics, and name parsing."""

from __future__ import annotations

import pytest

from app.domain.acl import (
    AclBinding,
    AclFilter,
    AclValidationError,
    Operation,
    PatternType,
    Permission,
    ResourceType,
    parse_enum,
    parse_filter_enum,
)
from app.domain.authorizer import Authorizer, PrefixSet
from app.errors import ValidationFailed

LITERAL, PREFIXED, ANY, MATCH = PatternType.LITERAL, PatternType.PREFIXED, PatternType.ANY, PatternType.MATCH
TOPIC, GROUP = ResourceType.TOPIC, ResourceType.GROUP


def topic_acl(name: str, pattern: PatternType, principal: str = "User:alice") -> AclBinding:
    return AclBinding(principal, "*", Operation.DELETE, Permission.ALLOW, TOPIC, name, pattern)


BINDINGS = {
    "literal orders.eu": topic_acl("orders.eu", LITERAL),
    "literal *": topic_acl("*", LITERAL),
    "literal orders": topic_acl("orders", LITERAL),
    "prefixed orders.": topic_acl("orders.", PREFIXED),
    "prefixed orders.eu": topic_acl("orders.eu", PREFIXED),
    "prefixed o": topic_acl("o", PREFIXED),
    "prefixed orders.eu.x": topic_acl("orders.eu.x", PREFIXED),
    "prefixed *": topic_acl("*", PREFIXED),
    "group literal orders.eu": AclBinding(
        "User:alice", "*", Operation.READ, Permission.ALLOW, GROUP, "orders.eu", LITERAL
    ),
    "user * literal orders.eu": topic_acl("orders.eu", LITERAL, principal="User:*"),
}


def selected(acl_filter: AclFilter) -> set[str]:
    return {label for label, binding in BINDINGS.items() if acl_filter.matches(binding)}


def test_empty_filter_matches_everything() -> None:
    assert selected(AclFilter()) == set(BINDINGS)
    assert selected(AclFilter(pattern_type=MATCH)) == set(BINDINGS)


def test_match_selects_every_binding_that_applies_to_the_name() -> None:
    assert selected(AclFilter(resource_type=TOPIC, resource_name="orders.eu", pattern_type=MATCH)) == {
        "literal orders.eu",
        "literal *",
        "prefixed orders.",
        "prefixed orders.eu",
        "prefixed o",
        "user * literal orders.eu",
    }


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (LITERAL, {"literal orders.eu", "user * literal orders.eu"}),
        (PREFIXED, {"prefixed orders.eu"}),
        (ANY, {"literal orders.eu", "user * literal orders.eu", "prefixed orders.eu"}),
        (None, {"literal orders.eu", "user * literal orders.eu", "prefixed orders.eu"}),
    ],
)
def test_exact_pattern_filters_compare_names_exactly(pattern: PatternType | None, expected: set[str]) -> None:
    assert (
        selected(AclFilter(resource_type=TOPIC, resource_name="orders.eu", pattern_type=pattern)) == expected
    )


def test_pattern_type_without_name_selects_that_type() -> None:
    assert selected(AclFilter(pattern_type=PREFIXED)) == {label for label in BINDINGS if "prefixed" in label}


def test_principal_and_host_filters_are_exact() -> None:
    assert selected(AclFilter(principal="User:*")) == {"user * literal orders.eu"}
    assert "user * literal orders.eu" not in selected(AclFilter(principal="User:alice"))
    assert selected(AclFilter(host="10.0.0.1")) == set()
    assert selected(AclFilter(operation=Operation.READ)) == {"group literal orders.eu"}
    assert selected(AclFilter(permission=Permission.DENY)) == set()
    assert selected(AclFilter(resource_type=GROUP)) == {"group literal orders.eu"}


def test_authorizer_lists_bindings_through_a_filter() -> None:
    authorizer = Authorizer(BINDINGS.values())
    found = authorizer.matching(
        AclFilter(resource_name="orders.eu", pattern_type=MATCH, principal="User:alice")
    )
    assert [b.resource_name for b in found] == ["orders.eu", "*", "orders.", "orders.eu", "o", "orders.eu"]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"pattern_type": MATCH}, "pattern_type"),
        ({"pattern_type": ANY}, "pattern_type"),
        ({"resource_name": ""}, "resource_name"),
        ({"principal": "alice"}, "principal"),
        ({"principal": ":alice"}, "principal"),
        ({"principal": "User:"}, "principal"),
        ({"host": ""}, "host"),
        ({"host": " 10.0.0.1"}, "host"),
        ({"operation": "DELETE"}, "operation"),
        ({"permission": "ALLOW"}, "permission"),
        ({"resource_type": "TOPIC"}, "resource_type"),
    ],
)
def test_binding_validation_like_kafka(kwargs: dict[str, object], field: str) -> None:
    values: dict[str, object] = {
        "principal": "User:alice",
        "host": "*",
        "operation": Operation.DELETE,
        "permission": Permission.ALLOW,
        "resource_type": TOPIC,
        "resource_name": "orders",
        "pattern_type": LITERAL,
    }
    with pytest.raises(AclValidationError) as caught:
        AclBinding(**{**values, **kwargs})  # type: ignore[arg-type]
    assert caught.value.field == field
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, ValidationFailed)
    assert caught.value.errors[0].pointer == f"/{field}"


def test_principal_name_may_contain_a_colon() -> None:
    assert topic_acl("x", LITERAL, principal="User:CN=a:b").principal == "User:CN=a:b"


def test_filter_validation() -> None:
    with pytest.raises(AclValidationError, match="principalType:principalName"):
        AclFilter(principal="alice")
    with pytest.raises(AclValidationError):
        AclFilter(operation="READ")  # type: ignore[arg-type]


def test_parse_enum_is_case_insensitive_and_refuses_any() -> None:
    assert parse_enum(Operation, " delete ", "operation") is Operation.DELETE
    assert parse_enum(PatternType, "prefixed", "pattern_type") is PREFIXED
    with pytest.raises(AclValidationError, match="operation must be concrete, not ANY"):
        parse_enum(Operation, "any", "operation")
    with pytest.raises(AclValidationError, match="permission must be concrete, not UNKNOWN"):
        parse_enum(Permission, "UNKNOWN", "permission")
    with pytest.raises(AclValidationError, match="expected one of: TOPIC, GROUP, CLUSTER"):
        parse_enum(ResourceType, "TRANSACTIONAL_ID", "resource_type")


def test_parse_filter_enum_treats_any_as_any() -> None:
    assert parse_filter_enum(Operation, None, "operation") is None
    assert parse_filter_enum(Operation, "ANY", "operation") is None
    assert parse_filter_enum(Permission, "any", "permission") is None
    assert parse_filter_enum(PatternType, "ANY", "pattern_type") is ANY
    assert parse_filter_enum(PatternType, "match", "pattern_type") is MATCH
    assert parse_filter_enum(Operation, "write", "operation") is Operation.WRITE
    with pytest.raises(AclValidationError):
        parse_filter_enum(Operation, "UNKNOWN", "operation")


@pytest.mark.parametrize(
    ("names", "name", "expected"),
    [
        ([], "abc", []),
        (["a", "ab", "abc"], "abc", ["abc", "ab", "a"]),
        (["a", "ab", "abc", "abd", "b"], "abe", ["ab", "a"]),
        (["fo", "foa"], "fob", ["fo"]),
        (["a", "ab", "b"], "bc", ["b"]),
        (["a", "ab", "abc", "ac", "acd"], "acde", ["acd", "ac", "a"]),
        (["f", "fa", "faz", "fb", "fz"], "fy", ["f"]),
        (["abc"], "ab", []),
        (["_"], "_", ["_"]),
        (["_"], "foo_", []),
        (["a"], "", []),
    ],
)
def test_prefix_set(names: list[str], name: str, expected: list[str]) -> None:
    assert PrefixSet(names).prefixes_of(name) == expected
