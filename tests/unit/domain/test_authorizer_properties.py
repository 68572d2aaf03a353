"""The indexed authorizer against a brute-force reference that reads kafka-semantics.md §5.1 literally.

Names come from a five-letter alphabet and are short, so LITERAL names, prefixes, the ``*`` wildcard and
the resource names asked about collide often; principals and hosts come from small sets for the same
reason. Runs are derandomized so CI sees the same examples every time.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.acl import AclBinding, AclFilter, Operation, PatternType, Permission, ResourceType
from app.domain.authorizer import Authorizer, PrefixSet

ALPHABET = "ab_-."
BINDING_PRINCIPALS = ["User:alice", "User:bob", "User:*", "Group:ops", "Group:*"]
CALLER_PRINCIPALS = ["User:alice", "User:bob", "User:carol", "Group:ops", "Group:dev"]
HOSTS = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]

# Names that nest (a, ab, abc, ab.) so that one resource name has several PREFIXED bindings, and near
# misses that sort between them (abd, b-a) so the prefix search must skip entries.
NESTED = ["a", "ab", "abc", "abd", "ab.", "ab.c", "a.b", "b", "b-", "b-a", "ba", "_", ".", "*"]
nested_names = st.sampled_from(NESTED)
names = st.one_of(nested_names, nested_names, st.text(ALPHABET, min_size=1, max_size=3))
near_names = st.tuples(nested_names, st.text(ALPHABET, max_size=1)).map("".join)
asked_names = st.one_of(near_names, near_names, st.text(ALPHABET, max_size=4))
# Mostly the operations that imply one another (or ALL, in bindings), sometimes any of Kafka's.
granted = [Operation.ALL, Operation.DELETE, Operation.READ, Operation.DESCRIBE, Operation.ALTER_CONFIGS]
asked = [Operation.DELETE, Operation.DESCRIBE, Operation.READ, Operation.DESCRIBE_CONFIGS]
granted_operations = st.one_of(st.sampled_from(granted), st.sampled_from(granted), st.sampled_from(Operation))
asked_operations = st.one_of(st.sampled_from(asked), st.sampled_from(asked), st.sampled_from(Operation))
# Mostly topics, so that bindings and questions meet.
resource_types = st.sampled_from([ResourceType.TOPIC] * 4 + [ResourceType.GROUP, ResourceType.CLUSTER])

bindings = st.builds(
    AclBinding,
    principal=st.sampled_from(BINDING_PRINCIPALS),
    host=st.sampled_from(["*", "*", "*", *HOSTS[:2]]),
    operation=granted_operations,
    permission=st.sampled_from([Permission.ALLOW, Permission.ALLOW, Permission.DENY]),
    resource_type=resource_types,
    resource_name=names,
    pattern_type=st.sampled_from([PatternType.LITERAL, PatternType.PREFIXED]),
)
binding_sets = st.lists(bindings, min_size=15, max_size=60)

Question = tuple[list[str], str, Operation, ResourceType, str]

random_questions = st.tuples(
    st.lists(st.sampled_from(CALLER_PRINCIPALS), min_size=1, max_size=3),
    st.sampled_from(HOSTS),
    asked_operations,
    resource_types,
    asked_names,
)


def aimed_at(acl: AclBinding) -> st.SearchStrategy[Question]:
    """A question that this binding applies to; whether it decides depends on the other bindings."""
    holder = st.sampled_from(CALLER_PRINCIPALS) if acl.principal == "User:*" else st.just(acl.principal)
    principals = st.tuples(holder, st.lists(st.sampled_from(CALLER_PRINCIPALS), max_size=2))
    if acl.pattern_type == PatternType.PREFIXED:
        name = st.tuples(st.just(acl.resource_name), st.text(ALPHABET, max_size=2)).map("".join)
    else:
        name = asked_names if acl.resource_name == "*" else st.just(acl.resource_name)
    return st.tuples(
        principals.map(lambda held: [held[0], *held[1]]),
        st.sampled_from(HOSTS) if acl.host == "*" else st.just(acl.host),
        st.one_of(st.just(acl.operation), asked_operations),
        st.just(acl.resource_type),
        name,
    )


def questions(acls: list[AclBinding]) -> st.SearchStrategy[Question]:
    if not acls:
        return random_questions
    return st.one_of(random_questions, st.sampled_from(acls).flatmap(aimed_at))


# The reference: every binding, one by one, exactly as the procedure is written down.
IMPLIED = {
    (Operation.DESCRIBE, Operation.READ),
    (Operation.DESCRIBE, Operation.WRITE),
    (Operation.DESCRIBE, Operation.DELETE),
    (Operation.DESCRIBE, Operation.ALTER),
    (Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS),
}


def covers(acl: AclBinding, resource_type: ResourceType, name: str) -> bool:
    if acl.resource_type != resource_type:
        return False
    if acl.pattern_type == PatternType.LITERAL:
        return acl.resource_name in (name, "*")
    return name.startswith(acl.resource_name)


def applies(acl: AclBinding, principals: list[str], host: str, operation: Operation) -> bool:
    if acl.principal != "User:*" and acl.principal not in principals:
        return False
    if acl.host not in ("*", host):
        return False
    if acl.operation in (Operation.ALL, operation):
        return True
    return acl.permission == Permission.ALLOW and (operation, acl.operation) in IMPLIED


def reference(
    acls: list[AclBinding],
    super_users: frozenset[str],
    allow_everyone: bool,
    question: Question,
) -> tuple[bool, list[AclBinding]]:
    """The answer, and the bindings that could justify it."""
    principals, host, operation, resource_type, name = question
    if any(principal in super_users for principal in principals):
        return True, []
    candidates = [acl for acl in acls if covers(acl, resource_type, name)]
    if not candidates:
        return allow_everyone, []
    applicable = [acl for acl in candidates if applies(acl, principals, host, operation)]
    denies = [acl for acl in applicable if acl.permission == Permission.DENY]
    if denies:
        return False, denies
    allows = [acl for acl in applicable if acl.permission == Permission.ALLOW]
    return bool(allows), allows


@settings(max_examples=150, derandomize=True, deadline=None)
@given(
    acls=binding_sets,
    super_users=st.frozensets(st.sampled_from(["User:alice", "Group:ops"]), max_size=1),
    allow_everyone=st.booleans(),
    data=st.data(),
)
def test_authorizer_agrees_with_reference(
    acls: list[AclBinding], super_users: frozenset[str], allow_everyone: bool, data: st.DataObject
) -> None:
    authorizer = Authorizer(acls, super_users, allow_everyone)
    for principals, host, _, resource_type, name in data.draw(
        st.lists(questions(acls), min_size=5, max_size=25)
    ):
        # Generating examples is what costs; asking every operation about each one is nearly free.
        for operation in Operation:
            question = (principals, host, operation, resource_type, name)
            expected, justifying = reference(acls, super_users, allow_everyone, question)
            decision = authorizer.authorize(*question)
            assert decision.allowed == expected, (question, decision)
            if justifying:
                assert decision.matched_binding in justifying
            else:
                assert decision.matched_binding is None


@settings(max_examples=100, derandomize=True, deadline=None)
@given(
    acls=st.lists(bindings, max_size=40),
    removed=st.lists(bindings, max_size=10),
    added=st.lists(bindings, max_size=10),
    data=st.data(),
)
def test_with_changes_equals_a_fresh_authorizer(
    acls: list[AclBinding], removed: list[AclBinding], added: list[AclBinding], data: st.DataObject
) -> None:
    removed = removed + acls[::3]
    changed = Authorizer(acls).with_changes(added=added, removed=removed)
    fresh = Authorizer([acl for acl in acls if acl not in removed] + added)
    assert set(changed.bindings) == set(fresh.bindings)
    for question in data.draw(st.lists(questions(acls + added), min_size=1, max_size=10)):
        assert changed.authorize(*question).allowed == fresh.authorize(*question).allowed


@settings(max_examples=300, derandomize=True, deadline=None)
@given(acls=st.lists(bindings, max_size=40), resource_type=st.sampled_from(ResourceType), name=asked_names)
def test_match_filter_selects_exactly_the_candidates(
    acls: list[AclBinding], resource_type: ResourceType, name: str
) -> None:
    acl_filter = AclFilter(resource_type=resource_type, resource_name=name, pattern_type=PatternType.MATCH)
    assert [acl for acl in acls if acl_filter.matches(acl)] == [
        acl for acl in acls if covers(acl, resource_type, name)
    ]


@settings(max_examples=500, derandomize=True, deadline=None)
@given(prefixes=st.sets(st.text(ALPHABET, min_size=1, max_size=5), max_size=30), name=asked_names)
def test_prefix_set_finds_every_prefix(prefixes: set[str], name: str) -> None:
    found = PrefixSet(prefixes).prefixes_of(name)
    assert sorted(found) == sorted(p for p in prefixes if name.startswith(p))
