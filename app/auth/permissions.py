"""The authorization the use cases ask before acting (``Runtime.authorization``): KIP-11 ACLs per cluster.

What each action needs, on the cluster the deletion or ACL belongs to:

- submit a deletion: DELETE on every topic (one denied topic refuses the whole request);
- approve a prefix retention policy: DELETE on every topic under the prefix, present and future
  (an ALLOW covering the whole prefix and no DENY reaching under it);
- read a topic's offsets or consumer groups: DESCRIBE on the topic;
- see a deletion (read, list, partitions, evidence, certificate): be its requester, or DESCRIBE on every
  topic it touches; anything else answers 404, so ids cannot be probed;
- cancel a deletion: DELETE on every topic;
- create or delete ACL bindings: ALTER on CLUSTER; list them: DESCRIBE on CLUSTER;
- consumers are Kafka consumer groups (as Kafka's OffsetCommit sees them): registering consumer ``X`` or
  reporting its progress needs READ on GROUP ``X`` (a report also READ on every topic in it); seeing it
  needs DESCRIBE on GROUP ``X`` (READ implies it), and one the caller may not describe answers 404;
- retention policies: ``app.services.retention.policies`` (owner, DESCRIBE/ALTER on CLUSTER, DELETE on
  topics);
- read or verify the audit trail: DESCRIBE on CLUSTER of every configured cluster (the trail spans them
  all; with no cluster configured, super users only).

Every refusal is a 403 naming what was denied, and an ``authz.denied`` audit event committed on its own
(the refused request writes nothing else), with the principal, host, and each deciding binding or reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import Deletion
from app.adapters.db.session import write_transaction
from app.audit import append_event
from app.audit.events import Actor, denials
from app.audit.events.denials import AclDenial
from app.auth.acl_sources import AclReader, AclSources, KafkaAclSource, ServiceAclSource
from app.auth.principals import Principal
from app.domain.acl import CLUSTER_RESOURCE_NAME, Operation, ResourceType
from app.domain.authorizer import Authorizer, Decision, parse_super_users
from app.domain.deletion_requests import DeletionScope
from app.domain.prefix_authorization import authorize_prefix
from app.errors import Forbidden
from app.settings import Settings

MAX_NAMED = 50


class KafkaAclAuthorization:
    """The ``check_*`` methods raise ``Forbidden`` (and audit the refusal); ``can_view`` answers a bool
    because a deletion the caller may not see is a 404, never a 403."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        sources: AclSources,
        clusters: Sequence[str],
        super_users: frozenset[str],
    ) -> None:
        self._sessionmaker = sessionmaker
        self.sources = sources
        self._clusters = tuple(clusters)
        self._super_users = super_users

    def is_super_user(self, principal: Principal) -> bool:
        return any(name in self._super_users for name in principal.names)

    async def denied_topics(
        self, principal: Principal, cluster: str, operation: Operation, topics: Sequence[str]
    ) -> dict[str, Decision]:
        """The topics on which ``operation`` is denied, with each decision."""
        if self.is_super_user(principal):
            return {}
        authorizer = await self.sources.authorizer(cluster)
        return _denied(authorizer, principal, operation, ResourceType.TOPIC, topics)

    async def check_delete_topics(
        self, principal: Principal, cluster: str, topics: Sequence[str], *, request_id: str | None = None
    ) -> None:
        denied = await self.denied_topics(principal, cluster, Operation.DELETE, topics)
        if denied:
            await self._refuse(principal, cluster, Operation.DELETE, ResourceType.TOPIC, denied, request_id)

    async def check_delete_prefix(
        self, principal: Principal, cluster: str, prefix: str, *, request_id: str | None = None
    ) -> None:
        if self.is_super_user(principal):
            return
        authorizer = await self.sources.authorizer(cluster)
        decision = authorize_prefix(
            authorizer, principal.names, principal.client_host, Operation.DELETE, ResourceType.TOPIC, prefix
        )
        if not decision.allowed:
            denied = {f"{prefix}*": decision}
            await self._refuse(principal, cluster, Operation.DELETE, ResourceType.TOPIC, denied, request_id)

    async def revoked_topics(
        self, cluster: str, principals: Sequence[str], client_host: str, topics: Sequence[str]
    ) -> dict[str, str]:
        """For the executor: the topics a deletion's requester may no longer DELETE on, with the reason."""
        if any(name in self._super_users for name in principals):
            return {}
        authorizer = await self.sources.authorizer(cluster)
        revoked: dict[str, str] = {}
        for topic in dict.fromkeys(topics):
            decision = authorizer.authorize(
                principals, client_host, Operation.DELETE, ResourceType.TOPIC, topic
            )
            if not decision.allowed:
                revoked[topic] = decision.reason
        return revoked

    async def check_describe_topics(
        self, principal: Principal, cluster: str, topics: Sequence[str], *, request_id: str | None = None
    ) -> None:
        denied = await self.denied_topics(principal, cluster, Operation.DESCRIBE, topics)
        if denied:
            await self._refuse(principal, cluster, Operation.DESCRIBE, ResourceType.TOPIC, denied, request_id)

    async def check_read_topics(
        self, principal: Principal, cluster: str, topics: Sequence[str], *, request_id: str | None = None
    ) -> None:
        denied = await self.denied_topics(principal, cluster, Operation.READ, topics)
        if denied:
            await self._refuse(principal, cluster, Operation.READ, ResourceType.TOPIC, denied, request_id)

    async def can_view(self, principal: Principal, deletion: DeletionScope) -> bool:
        if deletion.principal == principal.name or self.is_super_user(principal):
            return True
        return not await self.denied_topics(principal, deletion.cluster, Operation.DESCRIBE, deletion.topics)

    async def check_cancel(
        self, principal: Principal, deletion: Deletion, *, request_id: str | None = None
    ) -> None:
        denied = await self.denied_topics(principal, deletion.cluster, Operation.DELETE, deletion.topics)
        if denied:
            await self._refuse(
                principal, deletion.cluster, Operation.DELETE, ResourceType.TOPIC, denied, request_id
            )

    async def check_cluster(
        self, principal: Principal, cluster: str, operation: Operation, *, request_id: str | None = None
    ) -> None:
        if self.is_super_user(principal):
            return
        authorizer = await self.sources.authorizer(cluster)
        denied = _denied(authorizer, principal, operation, ResourceType.CLUSTER, [CLUSTER_RESOURCE_NAME])
        if denied:
            await self._refuse(principal, cluster, operation, ResourceType.CLUSTER, denied, request_id)

    async def check_groups(
        self,
        principal: Principal,
        cluster: str,
        operation: Operation,
        groups: Sequence[str],
        *,
        request_id: str | None = None,
    ) -> None:
        if self.is_super_user(principal) or not groups:
            return
        authorizer = await self.sources.authorizer(cluster)
        denied = _denied(authorizer, principal, operation, ResourceType.GROUP, groups)
        if denied:
            await self._refuse(principal, cluster, operation, ResourceType.GROUP, denied, request_id)

    async def describable_groups(self, principal: Principal, cluster: str, groups: Sequence[str]) -> set[str]:
        """The groups among ``groups`` that ``principal`` may DESCRIBE (no audit: visibility, not action)."""
        if self.is_super_user(principal) or not groups:
            return set(groups)
        authorizer = await self.sources.authorizer(cluster)
        denied = _denied(authorizer, principal, Operation.DESCRIBE, ResourceType.GROUP, groups)
        return {group for group in groups if group not in denied}

    async def may_on_cluster(self, principal: Principal, cluster: str, operation: Operation) -> bool:
        """Whether ``principal`` may perform ``operation`` on CLUSTER (no audit: for visibility)."""
        if self.is_super_user(principal):
            return True
        authorizer = await self.sources.authorizer(cluster)
        return not _denied(authorizer, principal, operation, ResourceType.CLUSTER, [CLUSTER_RESOURCE_NAME])

    async def check_audit_read(self, principal: Principal, *, request_id: str | None = None) -> None:
        if self.is_super_user(principal):
            return
        if not self._clusters:
            await self._refuse(principal, None, Operation.DESCRIBE, ResourceType.CLUSTER, {}, request_id)
        for cluster in self._clusters:
            await self.check_cluster(principal, cluster, Operation.DESCRIBE, request_id=request_id)

    async def _refuse(
        self,
        principal: Principal,
        cluster: str | None,
        operation: Operation,
        resource_type: ResourceType,
        denied: Mapping[str, Decision],
        request_id: str | None,
    ) -> None:
        names = sorted(denied)
        denial = AclDenial(principal.names, operation, resource_type, denied)
        async with write_transaction(self._sessionmaker) as session:
            await append_event(
                session, denials.authz_denied(Actor.of(principal, request_id), cluster, denial)
            )
        shown = ", ".join(names[:MAX_NAMED]) + (", ..." if len(names) > MAX_NAMED else "")
        where = f" {resource_type.value.lower()}(s): {shown}" if names else " the audit trail"
        raise Forbidden(
            f"{principal.name} from {principal.client_host} may not {operation.value} on{where}.",
            denied_operation=operation.value,
            denied_resource_type=resource_type.value,
            denied_resources=names[:MAX_NAMED],
            denied_count=len(names),
        )


def _denied(
    authorizer: Authorizer,
    principal: Principal,
    operation: Operation,
    resource_type: ResourceType,
    names: Sequence[str],
) -> dict[str, Decision]:
    decisions = {
        name: authorizer.authorize(principal.names, principal.client_host, operation, resource_type, name)
        for name in dict.fromkeys(names)
    }
    return {name: decision for name, decision in decisions.items() if not decision.allowed}


def build_authorization(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], reader: AclReader
) -> KafkaAclAuthorization:
    """The service's authorization: each cluster's ACL source, and ``PURGE_SUPER_USERS`` (validated)."""
    super_users = parse_super_users(settings.super_users)
    sources = AclSources(
        settings.clusters,
        service=ServiceAclSource(sessionmaker, super_users),
        kafka=KafkaAclSource(reader, settings.clusters, super_users),
    )
    return KafkaAclAuthorization(sessionmaker, sources, list(settings.clusters), super_users)
