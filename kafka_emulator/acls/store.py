"""The ACL store and Kafka's StandardAuthorizer decision procedure (kafka-semantics.md §5.1)."""

from __future__ import annotations

from collections.abc import Iterable

from kafka_emulator.acls.model import (
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclFilter,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)
from kafka_emulator.protocol.api import RequestContext

# An ALLOW on any of these operations also grants the key (AclOperation.java javadoc); DENY never implies.
IMPLIED_BY_ALLOW: dict[Operation, frozenset[Operation]] = {
    Operation.DESCRIBE: frozenset(
        {Operation.DESCRIBE, Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER}
    ),
    Operation.DESCRIBE_CONFIGS: frozenset({Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS}),
}


def parse_super_users(users: Iterable[str]) -> frozenset[str]:
    """Entries are trimmed and must read Type:Name; `User:*` here is a literal name, not a wildcard."""
    parsed = set()
    for raw in users:
        user = raw.strip()
        if not user:
            continue
        kind, sep, name = user.partition(":")
        if not sep or not kind or not name:
            raise ValueError(f"expected a string in format principalType:principalName but got {user}")
        parsed.add(user)
    return frozenset(parsed)


class AclStore:
    """ACL bindings plus the broker's authorizer. Disabled (no authorizer configured) allows everything."""

    def __init__(
        self,
        super_users: Iterable[str] = (),
        enabled: bool = False,
        allow_everyone_if_no_acl_found: bool = False,
    ) -> None:
        self.super_users = parse_super_users(super_users)
        self.enabled = enabled
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        self._acls: dict[AclBinding, None] = {}  # a dict keeps creation order for describe answers

    def add(self, binding: AclBinding) -> None:
        """Python-side creation (fixtures): validates like CreateAcls and turns the authorizer on."""
        reason = binding.invalid_reason()
        if reason is not None:
            raise ValueError(reason)
        self.enabled = True
        self._acls[binding] = None

    def create(self, binding: AclBinding) -> str | None:
        """CreateAcls for one binding: an error message, or None once stored (re-creating is a no-op)."""
        reason = binding.invalid_reason()
        if reason is None:
            self._acls[binding] = None
        return reason

    def find(self, acl_filter: AclFilter) -> list[AclBinding]:
        return [acl for acl in self._acls if acl_filter.matches(acl)]

    def remove(self, acl_filter: AclFilter) -> list[AclBinding]:
        removed = self.find(acl_filter)
        for acl in removed:
            del self._acls[acl]
        return removed

    def bindings(self) -> list[AclBinding]:
        return list(self._acls)

    def snapshot(self) -> dict[str, object]:
        return {
            "enabled": self.enabled,
            "super_users": sorted(self.super_users),
            "acls": [acl.to_json() for acl in self._acls],
        }

    def allowed(self, ctx: RequestContext, operation: str, resource_type: str, name: str) -> bool:
        op, rtype = Operation[operation], ResourceType[resource_type]
        return self.authorize(ctx.principal, ctx.client_host, op, rtype, name)

    def authorize(
        self, principal: str, host: str, operation: Operation, resource_type: ResourceType, name: str
    ) -> bool:
        if not self.enabled or principal in self.super_users:
            return True
        candidates = [acl for acl in self._acls if _covers(acl, resource_type, name)]
        if not candidates:
            return self.allow_everyone_if_no_acl_found
        applicable = [acl for acl in candidates if _applies(acl, principal, host)]
        if any(_denies(acl, operation) for acl in applicable):
            return False
        return any(_grants(acl, operation) for acl in applicable)


def _covers(acl: AclBinding, resource_type: ResourceType, name: str) -> bool:
    if acl.resource_type != resource_type:
        return False
    if acl.pattern_type == PatternType.LITERAL:
        return acl.name in (name, WILDCARD)
    return name.startswith(acl.name)


def _applies(acl: AclBinding, principal: str, host: str) -> bool:
    return acl.principal in (principal, WILDCARD_PRINCIPAL) and acl.host in (host, WILDCARD)


def _denies(acl: AclBinding, operation: Operation) -> bool:
    return acl.permission == Permission.DENY and acl.operation in (operation, Operation.ALL)


def _grants(acl: AclBinding, operation: Operation) -> bool:
    if acl.permission != Permission.ALLOW:
        return False
    if acl.operation == Operation.ALL:
        return True
    return acl.operation in IMPLIED_BY_ALLOW.get(operation, frozenset({operation}))
