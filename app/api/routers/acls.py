"""/v1/clusters/{cluster}/acls: the cluster's ACL bindings (KIP-11), with Kafka's filter semantics.

Creating and deleting need ALTER on CLUSTER, listing DESCRIBE on CLUSTER, as Kafka's CreateAcls,
DeleteAcls and DescribeAcls do. With ``acl_source: kafka`` the bindings live in the cluster itself: the
list shows them (read with DescribeAcls) and changes are refused with a 409 (manage them with Kafka's
tools). Every change is audited in the transaction that makes it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.repositories import acls as repo
from app.adapters.db.session import read_session, write_transaction
from app.api.deps import AuthorizationDep, RequestIdDep, RuntimeDep
from app.api.strict_json import StrictJsonRoute
from app.audit import append_event
from app.auth import Principal, PrincipalDep
from app.auth.acl_sources import AclSources
from app.domain.acl import (
    AclBinding,
    AclFilter,
    Operation,
    PatternType,
    Permission,
    ResourceType,
    parse_filter_enum,
)
from app.errors import Conflict, NotFound
from app.runtime import Runtime
from app.schemas.acls import AclCreate, AclList, AclRead
from app.schemas.common import problem_responses

router = APIRouter(prefix="/v1/clusters/{cluster}/acls", tags=["acls"], route_class=StrictJsonRoute)

ClusterPath = Annotated[str, Path(min_length=1, max_length=255, description="A configured cluster's name")]
FILTER_HELP = "Omit (or ANY) to match any value"
PATTERN_HELP = (
    "LITERAL or PREFIXED: bindings of that type; ANY (default): both; MATCH: every binding that applies "
    "to resource_name taken as a literal name (LITERAL equal, LITERAL *, PREFIXED prefixes)"
)


def _filter(
    principal: Annotated[str | None, Query(min_length=3, max_length=512, description=FILTER_HELP)] = None,
    host: Annotated[str | None, Query(min_length=1, max_length=64, description=FILTER_HELP)] = None,
    operation: Annotated[str | None, Query(max_length=32, description=FILTER_HELP)] = None,
    permission_type: Annotated[str | None, Query(max_length=8, description=FILTER_HELP)] = None,
    resource_type: Annotated[str | None, Query(max_length=16, description=FILTER_HELP)] = None,
    resource_name: Annotated[str | None, Query(min_length=1, max_length=512, description=FILTER_HELP)] = None,
    pattern_type: Annotated[str | None, Query(max_length=16, description=PATTERN_HELP)] = None,
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


def _sources(runtime: Runtime, cluster: str) -> AclSources:
    if cluster not in runtime.settings.clusters or runtime.acl_sources is None:
        raise NotFound(f"Unknown cluster {cluster!r}.")
    return runtime.acl_sources


def _refuse_if_kafka(sources: AclSources, cluster: str) -> None:
    if sources.is_kafka(cluster):
        raise Conflict(
            f"Cluster {cluster!r} takes its ACL bindings from Kafka (acl_source: kafka): they are read-only "
            "here. Change them in the cluster (kafka-acls.sh, or the Admin API's CreateAcls/DeleteAcls)."
        )


async def _audit_change(
    session: AsyncSession,
    action: str,
    principal: Principal,
    request_id: str,
    cluster: str,
    bindings: list[AclBinding],
) -> None:
    await append_event(
        session,
        action=action,
        principal=principal.name,
        client_host=principal.client_host,
        request_id=request_id,
        cluster=cluster,
        deletion_id=None,
        details={"bindings": [AclRead.of(b).model_dump(mode="json") for b in bindings]},
    )


@router.post(
    "",
    status_code=201,
    response_model=AclRead,
    responses=problem_responses(401, 403, 404, 409, 413, 415, 422),
)
async def create_acl(
    cluster: ClusterPath,
    body: AclCreate,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    authorization: AuthorizationDep,
    request_id: RequestIdDep,
) -> AclRead:
    """Add one binding (needs ALTER on CLUSTER); 409 if the cluster already has it."""
    sources = _sources(runtime, cluster)
    binding = body.binding()
    await authorization.check_cluster(principal, cluster, Operation.ALTER, request_id=request_id)
    _refuse_if_kafka(sources, cluster)
    try:
        async with write_transaction(runtime.sessionmaker) as session:
            await repo.bump_version(session, cluster)
            if not await repo.add_binding(session, cluster, binding, datetime.now(UTC)):
                raise Conflict(f"Cluster {cluster!r} already has this binding: {binding}.")
            await _audit_change(session, "acl.created", principal, request_id, cluster, [binding])
    except IntegrityError as exc:  # a concurrent request stored the same binding first
        raise Conflict(f"Cluster {cluster!r} already has this binding: {binding}.") from exc
    return AclRead.of(binding)


FilterDep = Annotated[AclFilter, Depends(_filter)]


@router.get("", response_model=AclList, responses=problem_responses(401, 403, 404, 422, 503))
async def list_acls(
    cluster: ClusterPath,
    acl_filter: FilterDep,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    authorization: AuthorizationDep,
    request_id: RequestIdDep,
) -> AclList:
    """List the bindings a Kafka filter selects (needs DESCRIBE on CLUSTER)."""
    sources = _sources(runtime, cluster)
    await authorization.check_cluster(principal, cluster, Operation.DESCRIBE, request_id=request_id)
    if sources.is_kafka(cluster):
        bindings = (await sources.authorizer(cluster)).matching(acl_filter)
        return AclList(source="kafka", items=[AclRead.of(b) for b in bindings])
    async with read_session(runtime.sessionmaker) as session:
        bindings = await repo.list_bindings(session, cluster)
    return AclList(source="service", items=[AclRead.of(b) for b in bindings if acl_filter.matches(b)])


@router.delete("", response_model=AclList, responses=problem_responses(401, 403, 404, 409, 422))
async def delete_acls(
    cluster: ClusterPath,
    acl_filter: FilterDep,
    principal: PrincipalDep,
    runtime: RuntimeDep,
    authorization: AuthorizationDep,
    request_id: RequestIdDep,
) -> AclList:
    """Delete every binding a Kafka filter selects (needs ALTER on CLUSTER); returns what was deleted."""
    sources = _sources(runtime, cluster)
    await authorization.check_cluster(principal, cluster, Operation.ALTER, request_id=request_id)
    _refuse_if_kafka(sources, cluster)
    async with write_transaction(runtime.sessionmaker) as session:
        await repo.bump_version(session, cluster)
        deleted = await repo.delete_matching(session, cluster, acl_filter)
        if deleted:
            await _audit_change(session, "acl.deleted", principal, request_id, cluster, deleted)
    return AclList(source="service", items=[AclRead.of(b) for b in deleted])
