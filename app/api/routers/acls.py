"""/v1/clusters/{cluster}/acls: the cluster's ACL bindings (``app.services.acls``)."""

from __future__ import annotations

import enum
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Body, Depends, Query

from app.api.examples import ACL_EXAMPLES
from app.api.paths import ClusterPath
from app.api.response_examples import ACL_CREATED_EXAMPLE
from app.api.routing import RequestIdDep, RuntimeDep, StrictJsonRoute
from app.auth import PrincipalDep
from app.domain.acl import (
    AclFilter,
    Operation,
    PatternType,
    Permission,
    ResourceType,
    parse_filter_enum,
)
from app.schemas.acls import AclCreate, AclList, AclRead
from app.schemas.common import problem_responses
from app.services import acls

router = APIRouter(prefix="/v1/clusters/{cluster}/acls", tags=["acls"], route_class=StrictJsonRoute)

PRINCIPAL_SHAPE: dict[str, Any] = {"pattern": "^[^:]+:.+$"}  # Kafka principal Type:Name (not ANY)
FILTER_HELP = "Omit (or ANY) to match any value"
E = TypeVar("E", bound=enum.StrEnum)


def _choices(kind: type[E]) -> dict[str, Any]:
    """A filter's values for the document: the names and ANY (the service also takes them in any case and
    with surrounding blanks, as Kafka's ``fromString``)."""
    names = [member.name for member in kind]
    return {"enum": [*names, "ANY"] if "ANY" not in names else names}


PATTERN_HELP = (
    "LITERAL or PREFIXED: bindings of that type; ANY (default): both; MATCH: every binding that applies "
    "to resource_name taken as a literal name (LITERAL equal, LITERAL *, PREFIXED prefixes)"
)


def _filter(
    principal: Annotated[
        str | None,
        Query(min_length=3, max_length=512, description=FILTER_HELP, json_schema_extra=PRINCIPAL_SHAPE),
    ] = None,
    host: Annotated[str | None, Query(min_length=1, max_length=64, description=FILTER_HELP)] = None,
    operation: Annotated[
        str | None, Query(max_length=32, description=FILTER_HELP, json_schema_extra=_choices(Operation))
    ] = None,
    permission_type: Annotated[
        str | None, Query(max_length=8, description=FILTER_HELP, json_schema_extra=_choices(Permission))
    ] = None,
    resource_type: Annotated[
        str | None, Query(max_length=16, description=FILTER_HELP, json_schema_extra=_choices(ResourceType))
    ] = None,
    resource_name: Annotated[str | None, Query(min_length=1, max_length=512, description=FILTER_HELP)] = None,
    pattern_type: Annotated[
        str | None, Query(max_length=16, description=PATTERN_HELP, json_schema_extra=_choices(PatternType))
    ] = None,
) -> AclFilter:
    """Kafka's AclBindingFilter from the query; names are case-insensitive, as in Kafka's fromString."""
    return AclFilter(
        principal=principal,
        host=host,
        operation=parse_filter_enum(Operation, operation, "operation"),
        permission=parse_filter_enum(Permission, permission_type, "permission_type"),
        resource_type=parse_filter_enum(ResourceType, resource_type, "resource_type"),
        resource_name=resource_name,
        pattern_type=parse_filter_enum(PatternType, pattern_type, "pattern_type"),
    )


@router.post(
    "",
    status_code=201,
    response_model=AclRead,
    responses={
        **problem_responses(401, 403, 404, 409, 413, 415, 422),
        201: {"content": {"application/json": {"example": ACL_CREATED_EXAMPLE}}},
    },
)
async def create_acl(
    cluster: ClusterPath,
    body: Annotated[AclCreate, Body(openapi_examples=ACL_EXAMPLES)],
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> AclRead:
    """Add one binding (needs ALTER on CLUSTER); 409 if the cluster already has it."""
    binding = await acls.create_acl(runtime, principal, cluster, body.binding(), request_id=request_id)
    return AclRead.of(binding)


FilterDep = Annotated[AclFilter, Depends(_filter)]


@router.get("", response_model=AclList, responses=problem_responses(401, 403, 404, 422, 503))
async def list_acls(
    cluster: ClusterPath,
    acl_filter: FilterDep,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> AclList:
    """List the bindings a Kafka filter selects (needs DESCRIBE on CLUSTER)."""
    source, bindings = await acls.list_acls(runtime, principal, cluster, acl_filter, request_id=request_id)
    return AclList(source=source, items=[AclRead.of(b) for b in bindings])


@router.delete("", response_model=AclList, responses=problem_responses(401, 403, 404, 409, 422))
async def delete_acls(
    cluster: ClusterPath,
    acl_filter: FilterDep,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    request_id: RequestIdDep,
) -> AclList:
    """Delete every binding a Kafka filter selects (needs ALTER on CLUSTER); returns what was deleted."""
    deleted = await acls.delete_acls(runtime, principal, cluster, acl_filter, request_id=request_id)
    return AclList(source="service", items=[AclRead.of(b) for b in deleted])
