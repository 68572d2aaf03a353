"""Prefix grants: allowed only when Kafka's decision would allow every topic under the prefix."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.acl import AclBinding, Operation, PatternType, Permission, ResourceType
from app.domain.authorizer import Authorizer
from app.domain.prefix_authorization import authorize_prefix

ALICE = "User:alice"
TEAM = "Group:orders"
HOST = "10.0.0.7"


def binding(
    name: str,
    pattern: PatternType = PatternType.PREFIXED,
    permission: Permission = Permission.ALLOW,
    principal: str = ALICE,
    operation: Operation = Operation.DELETE,
    host: str = "*",
) -> AclBinding:
    return AclBinding(principal, host, operation, permission, ResourceType.TOPIC, name, pattern)


def decide(bindings: list[AclBinding], prefix: str, super_users: frozenset[str] = frozenset()) -> bool:
    authorizer = Authorizer(bindings, super_users)
    decision = authorize_prefix(authorizer, [ALICE, TEAM], HOST, Operation.DELETE, ResourceType.TOPIC, prefix)
    return decision.allowed


def test_a_prefixed_allow_covering_the_prefix_grants_it() -> None:
    assert decide([binding("orders.")], "orders.eu.")
    assert decide([binding("orders.")], "orders.")


def test_a_narrower_prefixed_allow_does_not_grant_a_wider_prefix() -> None:
    assert not decide([binding("orders.eu.")], "orders.")


def test_literal_topics_never_grant_a_prefix_but_the_wildcard_does() -> None:
    assert not decide([binding("orders.eu", PatternType.LITERAL)], "orders.")
    assert decide([binding("*", PatternType.LITERAL)], "orders.")


def test_a_deny_on_any_topic_under_the_prefix_refuses_it() -> None:
    allow = binding("orders.")
    assert not decide([allow, binding("orders.audit", PatternType.LITERAL, Permission.DENY)], "orders.")
    assert not decide([allow, binding("orders.eu.", permission=Permission.DENY)], "orders.")
    assert not decide([allow, binding("ord", permission=Permission.DENY)], "orders.")
    assert not decide([allow, binding("*", PatternType.LITERAL, Permission.DENY, "User:*")], "orders.")
    # A DENY elsewhere does not matter.
    assert decide([allow, binding("payments", PatternType.LITERAL, Permission.DENY)], "orders.")


def test_group_principals_host_and_operation_are_matched_as_kafka_does() -> None:
    assert decide([binding("orders.", principal=TEAM)], "orders.")
    assert decide([binding("orders.", operation=Operation.ALL)], "orders.")
    assert not decide([binding("orders.", operation=Operation.READ)], "orders.")
    assert not decide([binding("orders.", host="10.0.0.8")], "orders.")
    assert decide([binding("orders.", host=HOST)], "orders.")


def test_super_users_and_empty_prefix() -> None:
    assert decide([], "orders.", super_users=frozenset({TEAM}))
    with pytest.raises(ValueError, match="empty"):
        decide([], "")


NAMES = st.text(alphabet="ab.", min_size=1, max_size=4)
BINDINGS = st.builds(
    binding,
    name=st.one_of(NAMES, st.just("*")),
    pattern=st.sampled_from([PatternType.LITERAL, PatternType.PREFIXED]),
    permission=st.sampled_from(list(Permission)),
    principal=st.sampled_from([ALICE, TEAM, "User:*", "User:bob"]),
    operation=st.sampled_from([Operation.DELETE, Operation.ALL, Operation.READ]),
    host=st.sampled_from(["*", HOST, "10.0.0.8"]),
)


@settings(max_examples=400, derandomize=True)
@given(bindings=st.lists(BINDINGS, max_size=6), prefix=NAMES, suffixes=st.lists(NAMES, max_size=8))
def test_a_granted_prefix_allows_every_topic_under_it(
    bindings: list[AclBinding], prefix: str, suffixes: list[str]
) -> None:
    authorizer = Authorizer(bindings)
    principals = [ALICE, TEAM]
    granted = authorize_prefix(authorizer, principals, HOST, Operation.DELETE, ResourceType.TOPIC, prefix)
    if granted.allowed:
        for suffix in ["", *suffixes]:
            topic = authorizer.authorize(
                principals, HOST, Operation.DELETE, ResourceType.TOPIC, prefix + suffix
            )
            assert topic.allowed, (prefix + suffix, topic.reason)
