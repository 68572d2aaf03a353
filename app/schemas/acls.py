"""ACL binding schemas, with Kafka's field names (``permission_type`` as in DescribeAcls)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.domain.acl import AclBinding, Operation, PatternType, Permission, ResourceType

PrincipalText = Field(
    min_length=3,
    max_length=512,
    description="Type:Name, e.g. User:alice, Group:payments; User:* is everyone",
    json_schema_extra={"pattern": "^[^:]+:.+$"},
)


def _literal_or_prefixed(schema: dict[str, Any]) -> None:
    """A binding's pattern type in the document: ANY and MATCH are for filters only."""
    schema.pop("$ref", None)
    schema.update(type="string", enum=[PatternType.LITERAL.value, PatternType.PREFIXED.value])


OPERATION_HELP = "Kafka's operation: DELETE (purge records), DESCRIBE, READ, ALTER, ALL, ..."
PERMISSION_HELP = "ALLOW or DENY; a DENY beats every ALLOW"
RESOURCE_TYPE_HELP = "TOPIC, GROUP (consumers) or CLUSTER"


class AclCreate(BaseModel):
    """One binding, validated as Kafka's controller does (concrete operation and permission, LITERAL or
    PREFIXED pattern, non-empty name, principal ``Type:Name``)."""

    model_config = ConfigDict(extra="forbid")

    principal: str = PrincipalText
    host: str = Field(default="*", min_length=1, max_length=64, description="* or the client's IP address")
    operation: Operation = Field(description=OPERATION_HELP)
    permission_type: Permission = Field(description=PERMISSION_HELP)
    resource_type: ResourceType = Field(description=RESOURCE_TYPE_HELP)
    resource_name: str = Field(
        min_length=1,
        max_length=512,
        description="A topic or group name, * (LITERAL only: every name), or kafka-cluster for CLUSTER",
    )
    pattern_type: PatternType = Field(
        default=PatternType.LITERAL,
        description="LITERAL or PREFIXED",
        json_schema_extra=_literal_or_prefixed,
    )

    def binding(self) -> AclBinding:
        return AclBinding(
            principal=self.principal,
            host=self.host,
            operation=self.operation,
            permission=self.permission_type,
            resource_type=self.resource_type,
            resource_name=self.resource_name,
            pattern_type=self.pattern_type,
        )


class AclRead(BaseModel):
    """One binding of the cluster."""

    principal: str = Field(description="Type:Name, e.g. User:alice, Group:payments; User:* is everyone")
    host: str = Field(description="* or the client's IP address")
    operation: Operation = Field(description=OPERATION_HELP)
    permission_type: Permission = Field(description=PERMISSION_HELP)
    resource_type: ResourceType = Field(description=RESOURCE_TYPE_HELP)
    resource_name: str = Field(description="A topic or group name, a prefix (PREFIXED), *, or kafka-cluster")
    pattern_type: PatternType = Field(description="LITERAL or PREFIXED")

    @classmethod
    def of(cls, binding: AclBinding) -> AclRead:
        return cls(
            principal=binding.principal,
            host=binding.host,
            operation=binding.operation,
            permission_type=binding.permission,
            resource_type=binding.resource_type,
            resource_name=binding.resource_name,
            pattern_type=binding.pattern_type,
        )


class AclList(BaseModel):
    """Bindings of a cluster; ``source`` says where the cluster's bindings live."""

    source: Literal["service", "kafka"] = Field(
        description="service: kept and changed here; kafka: read from the cluster (DescribeAcls), read-only"
    )
    items: list[AclRead] = Field(description="The bindings")
