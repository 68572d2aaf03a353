"""ACL bindings and binding filters with Kafka's wire codes (AclOperation, ResourceType, PatternType ...)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TypeVar

CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class Operation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class Permission(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


CONCRETE_PATTERNS = (PatternType.LITERAL, PatternType.PREFIXED)
E = TypeVar("E", bound=IntEnum)


def enum_value(kind: type[E], code: int) -> E:
    """Codes a client sends that this version of Kafka does not know read as UNKNOWN."""
    try:
        return kind(code)
    except ValueError:
        return kind(0)


@dataclass(frozen=True)
class AclBinding:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: Operation
    permission: Permission

    def invalid_reason(self) -> str | None:
        """Why Kafka (AclApis + AclControlManager.validateNewAcl) would refuse to create this binding."""
        if self.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
            return "Invalid resource type"
        if self.pattern_type not in CONCRETE_PATTERNS:
            return "Invalid patternType " + self.pattern_type.name
        if self.operation in (Operation.UNKNOWN, Operation.ANY):
            return "Invalid operation " + self.operation.name
        if self.permission in (Permission.UNKNOWN, Permission.ANY):
            return "Invalid permissionType " + self.permission.name
        if not self.name:
            return "Invalid empty resource name"
        if self.resource_type == ResourceType.CLUSTER and self.name != CLUSTER_NAME:
            return "The only valid name for the CLUSTER resource is " + CLUSTER_NAME
        kind, sep, user = self.principal.partition(":")
        if not sep or not kind or not user:
            return "Could not parse principal " + repr(self.principal)
        return None

    def to_json(self) -> dict[str, str]:
        return {
            "resource_type": self.resource_type.name,
            "name": self.name,
            "pattern_type": self.pattern_type.name,
            "principal": self.principal,
            "host": self.host,
            "operation": self.operation.name,
            "permission": self.permission.name,
        }


@dataclass(frozen=True)
class AclFilter:
    """AclBindingFilter: None strings match anything; ANY codes match any value; MATCH patterns resolve."""

    resource_type: ResourceType = ResourceType.ANY
    name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: Operation = Operation.ANY
    permission: Permission = Permission.ANY

    def unknown_element(self) -> bool:
        return 0 in (self.resource_type, self.pattern_type, self.operation, self.permission)

    def matches(self, acl: AclBinding) -> bool:
        return self._matches_pattern(acl) and self._matches_entry(acl)

    def _matches_pattern(self, acl: AclBinding) -> bool:
        if self.resource_type != ResourceType.ANY and self.resource_type != acl.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH, acl.pattern_type):
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, acl.pattern_type):
            return self.name == acl.name
        if acl.pattern_type == PatternType.LITERAL:
            return acl.name in (self.name, WILDCARD)
        return self.name.startswith(acl.name)

    def _matches_entry(self, acl: AclBinding) -> bool:
        return (
            (self.principal is None or self.principal == acl.principal)
            and (self.host is None or self.host == acl.host)
            and self.operation in (Operation.ANY, acl.operation)
            and self.permission in (Permission.ANY, acl.permission)
        )
