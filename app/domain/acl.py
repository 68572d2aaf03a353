"""ACL value types with Kafka's (KIP-11) meaning: bindings, filters, and their validation.

A binding grants or refuses one operation to one principal from one host on a resource pattern.
Principals are ``Type:Name`` strings compared case-sensitively (``User:alice``, ``Group:payments``);
``User:*`` is the only principal wildcard, ``*`` the only host wildcard, and a LITERAL resource named
``*`` the only resource wildcard (a PREFIXED ``*`` is an ordinary prefix).

Filters follow Kafka's ``AclBindingFilter``: a field left ``None`` matches anything, and the pattern type
``MATCH`` selects every binding that would apply to the given literal resource name.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TypeVar

from app.errors import FieldError, ValidationFailed

WILDCARD_PRINCIPAL = "User:*"
WILDCARD_HOST = "*"
WILDCARD_RESOURCE = "*"
CLUSTER_RESOURCE_NAME = "kafka-cluster"


class ResourceType(enum.StrEnum):
    TOPIC = "TOPIC"
    GROUP = "GROUP"
    CLUSTER = "CLUSTER"


class PatternType(enum.StrEnum):
    LITERAL = "LITERAL"
    PREFIXED = "PREFIXED"
    # Filters only: ANY matches both pattern types, MATCH every pattern that applies to a literal name.
    ANY = "ANY"
    MATCH = "MATCH"


class Operation(enum.StrEnum):
    ALL = "ALL"
    READ = "READ"
    WRITE = "WRITE"
    CREATE = "CREATE"
    DELETE = "DELETE"
    ALTER = "ALTER"
    DESCRIBE = "DESCRIBE"
    CLUSTER_ACTION = "CLUSTER_ACTION"
    DESCRIBE_CONFIGS = "DESCRIBE_CONFIGS"
    ALTER_CONFIGS = "ALTER_CONFIGS"
    IDEMPOTENT_WRITE = "IDEMPOTENT_WRITE"
    CREATE_TOKENS = "CREATE_TOKENS"
    DESCRIBE_TOKENS = "DESCRIBE_TOKENS"


class Permission(enum.StrEnum):
    ALLOW = "ALLOW"
    DENY = "DENY"


class AclValidationError(ValidationFailed, ValueError):
    """A binding or filter that Kafka would refuse; ``field`` names the offending attribute."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message, errors=[FieldError(pointer=f"/{field}", detail=message)])
        self.field = field


E = TypeVar("E", bound=enum.StrEnum)


def parse_enum(kind: type[E], text: str, field: str) -> E:
    """Kafka's ``fromString``: case-insensitive name; ``ANY``/``UNKNOWN`` are refused where absent."""
    name = text.strip().upper()
    try:
        return kind[name]
    except KeyError:
        if name in ("ANY", "UNKNOWN"):
            raise AclValidationError(field, f"{field} must be concrete, not {name}") from None
        choices = ", ".join(member.name for member in kind)
        raise AclValidationError(field, f"unknown {field} {text!r}, expected one of: {choices}") from None


def parse_filter_enum(kind: type[E], text: str | None, field: str) -> E | None:
    """Like ``parse_enum`` for a filter field, where a missing value or ``ANY`` means "any"."""
    if text is None:
        return None
    name = text.strip().upper()
    if name == "ANY" and name not in kind.__members__:
        return None
    return parse_enum(kind, text, field)


def validate_principal(principal: str, field: str = "principal") -> None:
    """A principal is ``Type:Name`` with both parts non-empty (the name may itself contain ``:``)."""
    kind, colon, name = principal.partition(":")
    if not (kind and colon and name):
        raise AclValidationError(
            field, f"expected a string in format principalType:principalName but got {principal}"
        )


def _validate_host(host: str) -> None:
    if not host or host != host.strip():
        raise AclValidationError("host", f"host must be '*' or an IP address, got {host!r}")


def _require(value: object, kind: type[enum.Enum], field: str) -> None:
    if not isinstance(value, kind):
        raise AclValidationError(field, f"{field} must be a {kind.__name__}, got {value!r}")


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL, valid by construction (Kafka's ``AclControlManager.validateNewAcl`` rules)."""

    principal: str
    host: str
    operation: Operation
    permission: Permission
    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType

    def __post_init__(self) -> None:
        _require(self.operation, Operation, "operation")
        _require(self.permission, Permission, "permission")
        _require(self.resource_type, ResourceType, "resource_type")
        _require(self.pattern_type, PatternType, "pattern_type")
        if self.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
            raise AclValidationError(
                "pattern_type", f"pattern_type must be LITERAL or PREFIXED, not {self.pattern_type}"
            )
        if not self.resource_name:
            raise AclValidationError("resource_name", "resource_name must not be empty")
        validate_principal(self.principal)
        _validate_host(self.host)

    def __str__(self) -> str:
        return (
            f"{self.permission} {self.operation} on {self.resource_type}:{self.pattern_type}:"
            f"{self.resource_name} for {self.principal} from {self.host}"
        )


@dataclass(frozen=True, slots=True)
class AclFilter:
    """Kafka's ``AclBindingFilter``: ``None`` in any field matches anything.

    ``pattern_type`` None or ANY matches both pattern types (``resource_name``, if given, compared
    exactly); LITERAL or PREFIXED matches that type only; MATCH with a ``resource_name`` matches the
    LITERAL binding of that name, the LITERAL ``*`` binding and every PREFIXED binding whose name is a
    prefix of it (MATCH without a name matches everything, as in Kafka). Principal and host compare
    exactly: a filter for ``User:alice`` does not select ``User:*`` bindings.
    """

    principal: str | None = None
    host: str | None = None
    operation: Operation | None = None
    permission: Permission | None = None
    resource_type: ResourceType | None = None
    resource_name: str | None = None
    pattern_type: PatternType | None = None

    def __post_init__(self) -> None:
        for value, kind, field in (
            (self.operation, Operation, "operation"),
            (self.permission, Permission, "permission"),
            (self.resource_type, ResourceType, "resource_type"),
            (self.pattern_type, PatternType, "pattern_type"),
        ):
            if value is not None:
                _require(value, kind, field)
        if self.principal is not None:
            validate_principal(self.principal)
        if self.host is not None:
            _validate_host(self.host)

    def matches(self, binding: AclBinding) -> bool:
        return self._matches_entry(binding) and self._matches_pattern(binding)

    def _matches_entry(self, binding: AclBinding) -> bool:
        return (
            (self.principal is None or self.principal == binding.principal)
            and (self.host is None or self.host == binding.host)
            and (self.operation is None or self.operation == binding.operation)
            and (self.permission is None or self.permission == binding.permission)
        )

    def _matches_pattern(self, binding: AclBinding) -> bool:
        if self.resource_type is not None and self.resource_type != binding.resource_type:
            return False
        kind = self.pattern_type or PatternType.ANY
        if kind in (PatternType.LITERAL, PatternType.PREFIXED) and kind != binding.pattern_type:
            return False
        name = self.resource_name
        if name is None:
            return True
        if kind != PatternType.MATCH:
            return name == binding.resource_name
        if binding.pattern_type == PatternType.LITERAL:
            return binding.resource_name in (name, WILDCARD_RESOURCE)
        return name.startswith(binding.resource_name)
