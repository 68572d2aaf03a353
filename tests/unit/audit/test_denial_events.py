"""The stored shape of ``authz.denied``: a KIP-11 refusal names at most 1,000 resources, in order, each
with its deciding binding, and counts them all; an approval refusal names the request and the reason."""

from __future__ import annotations

from app.audit.events import Actor, denials
from app.audit.events.denials import AclDenial, ApprovalDenial
from app.domain.acl import AclBinding, Operation, PatternType, Permission, ResourceType
from app.domain.authorizer import Decision

ACTOR = Actor("User:alice", "10.0.0.7", "req-1")
DENY = AclBinding(
    "User:alice", "*", Operation.DELETE, Permission.DENY, ResourceType.TOPIC, "pii", PatternType.PREFIXED
)


def test_a_kip11_refusal_names_each_resource_with_its_binding() -> None:
    denied = {"pii-b": Decision(False, "DENY binding"), "pii-a": Decision(False, "DENY binding", DENY)}
    denial = AclDenial(("User:alice", "Group:ops"), Operation.DELETE, ResourceType.TOPIC, denied)
    event = denials.authz_denied(ACTOR, "main", denial)
    assert (event.action, event.principal, event.client_host, event.cluster) == (
        "authz.denied",
        "User:alice",
        "10.0.0.7",
        "main",
    )
    assert event.details == {
        "principals": ["User:alice", "Group:ops"],
        "host": "10.0.0.7",
        "operation": "DELETE",
        "resource_type": "TOPIC",
        "topics": ["pii-a", "pii-b"],
        "denied": [
            {
                "resource_name": "pii-a",
                "reason": "DENY binding",
                "binding": {
                    "principal": "User:alice",
                    "host": "*",
                    "operation": "DELETE",
                    "permission_type": "DENY",
                    "resource_type": "TOPIC",
                    "resource_name": "pii",
                    "pattern_type": "PREFIXED",
                },
            },
            {"resource_name": "pii-b", "reason": "DENY binding", "binding": None},
        ],
        "denied_count": 2,
    }


def test_a_large_refusal_names_the_first_thousand_and_counts_all() -> None:
    denied = {f"g{i:04}": Decision(False, "no ALLOW") for i in range(1_500, 0, -1)}
    denial = AclDenial(("User:alice",), Operation.READ, ResourceType.GROUP, denied)
    details = denials.authz_denied(ACTOR, "main", denial).details
    assert "topics" not in details
    assert details["resources"] == [f"g{i:04}" for i in range(1, 1_001)]
    assert [d["resource_name"] for d in details["denied"]] == details["resources"]
    assert details["denied_count"] == 1_500


def test_an_approval_refusal_names_the_request_and_why() -> None:
    denial = ApprovalDenial("deletion", "d-1", "the requester may not approve their own request")
    assert denials.authz_denied(ACTOR, "main", denial).details == {
        "operation": "APPROVE",
        "subject_kind": "deletion",
        "subject": "d-1",
        "reason": "the requester may not approve their own request",
    }
