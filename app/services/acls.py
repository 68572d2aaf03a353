"""The cluster's ACL bindings (KIP-11), with Kafka's filter semantics.

Creating and deleting need ALTER on CLUSTER, listing DESCRIBE on CLUSTER, as Kafka's CreateAcls,
DeleteAcls and DescribeAcls do. With ``acl_source: kafka`` the bindings live in the cluster itself: the
list shows them (read with DescribeAcls) and changes are refused with a 409 (manage them with Kafka's
tools). Every change is audited in the transaction that makes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy.exc import IntegrityError

from app.adapters.db.repositories import acls as repo
from app.adapters.db.session import read_session, write_transaction
from app.audit import append_event, events
from app.audit.events import Actor
from app.auth import Principal
from app.auth.acl_sources import AclSources
from app.domain.acl import AclBinding, AclFilter, Operation
from app.errors import ClusterNotFound, Conflict
from app.schemas.acls import AclRead
from app.services.runtime import Runtime

AclSource = Literal["service", "kafka"]


def _sources(runtime: Runtime, cluster: str) -> AclSources:
    if cluster not in runtime.settings.clusters or runtime.acl_sources is None:
        raise ClusterNotFound(f"Unknown cluster {cluster!r}.")
    return runtime.acl_sources


def _refuse_if_kafka(sources: AclSources, cluster: str) -> None:
    if sources.is_kafka(cluster):
        raise Conflict(
            f"Cluster {cluster!r} takes its ACL bindings from Kafka (acl_source: kafka): they are read-only "
            "here. Change them in the cluster (kafka-acls.sh, or the Admin API's CreateAcls/DeleteAcls)."
        )


def _listed(bindings: Sequence[AclBinding]) -> list[dict[str, object]]:
    return [AclRead.of(b).model_dump(mode="json") for b in bindings]


async def create_acl(
    runtime: Runtime, principal: Principal, cluster: str, binding: AclBinding, *, request_id: str
) -> AclBinding:
    """Add one binding (needs ALTER on CLUSTER); 409 if the cluster already has it."""
    sources = _sources(runtime, cluster)
    await runtime.authorization.check_cluster(principal, cluster, Operation.ALTER, request_id=request_id)
    _refuse_if_kafka(sources, cluster)
    try:
        async with write_transaction(runtime.sessionmaker) as session:
            await repo.bump_version(session, cluster)
            if not await repo.add_binding(session, cluster, binding, datetime.now(UTC)):
                raise Conflict(f"Cluster {cluster!r} already has this binding: {binding}.")
            actor = Actor.of(principal, request_id)
            await append_event(session, events.acl_created(actor, cluster, _listed([binding])))
    except IntegrityError as exc:  # a concurrent request stored the same binding first
        raise Conflict(f"Cluster {cluster!r} already has this binding: {binding}.") from exc
    return binding


async def list_acls(
    runtime: Runtime, principal: Principal, cluster: str, acl_filter: AclFilter, *, request_id: str
) -> tuple[AclSource, list[AclBinding]]:
    """The bindings a Kafka filter selects and where they live (needs DESCRIBE on CLUSTER)."""
    sources = _sources(runtime, cluster)
    await runtime.authorization.check_cluster(principal, cluster, Operation.DESCRIBE, request_id=request_id)
    if sources.is_kafka(cluster):
        return "kafka", list((await sources.authorizer(cluster)).matching(acl_filter))
    async with read_session(runtime.sessionmaker) as session:
        bindings = await repo.list_bindings(session, cluster)
    return "service", [b for b in bindings if acl_filter.matches(b)]


async def delete_acls(
    runtime: Runtime, principal: Principal, cluster: str, acl_filter: AclFilter, *, request_id: str
) -> list[AclBinding]:
    """Delete every binding a Kafka filter selects (needs ALTER on CLUSTER); returns what was deleted."""
    sources = _sources(runtime, cluster)
    await runtime.authorization.check_cluster(principal, cluster, Operation.ALTER, request_id=request_id)
    _refuse_if_kafka(sources, cluster)
    async with write_transaction(runtime.sessionmaker) as session:
        await repo.bump_version(session, cluster)
        deleted = await repo.delete_matching(session, cluster, acl_filter)
        if deleted:
            actor = Actor.of(principal, request_id)
            await append_event(session, events.acl_deleted(actor, cluster, _listed(deleted)))
    return list(deleted)
