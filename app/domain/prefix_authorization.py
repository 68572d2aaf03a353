"""May a principal act on *every* resource whose name starts with a prefix?

A retention policy selecting topics by prefix keeps deleting in topics created after it was approved,
so approving it needs a grant that covers the whole prefix, not only the topics that exist today.
The answer is yes only if one of the caller's principals (or ``User:*``) holds an ALLOW binding that
covers every name under the prefix — LITERAL ``*``, or PREFIXED with a name the prefix starts with —
and no DENY binding for them could apply to any name under it. That is what Kafka's own decision
(``Authorizer.authorize``) would answer for each such topic, whatever its name. ``allow.everyone.if.
no.acl.found`` never grants a prefix: a topic created later could get bindings of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.domain.acl import (
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    WILDCARD_RESOURCE,
    AclBinding,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)
from app.domain.authorizer import Authorizer, Decision, operation_matches


def authorize_prefix(
    authorizer: Authorizer,
    principals: Sequence[str],
    client_host: str,
    operation: Operation,
    resource_type: ResourceType,
    prefix: str,
) -> Decision:
    if not prefix:
        raise ValueError("prefix must not be empty")
    for principal in principals:
        if principal in authorizer.super_users:
            return Decision(True, f"super user {principal}")
    callers = {*principals, WILDCARD_PRINCIPAL}
    relevant = [
        binding
        for binding in authorizer.bindings
        if binding.resource_type == resource_type
        and binding.principal in callers
        and binding.host in (WILDCARD_HOST, client_host)
        and operation_matches(binding, operation)
    ]
    for binding in relevant:
        if binding.permission == Permission.DENY and _may_apply_under(binding, prefix):
            return Decision(False, f"denied by {binding}", binding)
    for binding in relevant:
        if binding.permission == Permission.ALLOW and _covers_all_under(binding, prefix):
            return Decision(True, f"allowed by {binding}", binding)
    return Decision(False, f"no ALLOW binding covers every name starting with {prefix!r}")


def _covers_all_under(binding: AclBinding, prefix: str) -> bool:
    if binding.pattern_type == PatternType.LITERAL:
        return binding.resource_name == WILDCARD_RESOURCE
    return prefix.startswith(binding.resource_name)


def _may_apply_under(binding: AclBinding, prefix: str) -> bool:
    name = binding.resource_name
    if binding.pattern_type == PatternType.LITERAL:
        return name == WILDCARD_RESOURCE or name.startswith(prefix)
    return name.startswith(prefix) or prefix.startswith(name)
