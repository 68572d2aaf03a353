"""Where each cluster's ACL bindings come from, cached as a built ``Authorizer``.

- ``acl_source: service``: the bindings stored in the database. Every decision first reads the cluster's
  ``acl_version`` (one primary-key read) and rebuilds the cached authorizer only when it moved, so a change
  made through any service instance applies to the very next decision of every instance. A TTL would leave
  a revoked binding effective for the TTL; the version read costs well under a millisecond.
- ``acl_source: kafka``: the cluster's own bindings, read with DescribeAcls and kept for
  ``acl_cache_seconds`` (the cluster offers no cheap change counter). A read that fails raises
  ``ServiceUnavailable``: the service fails closed, it never decides without bindings.

Super users (``PURGE_SUPER_USERS``) apply to both sources. ``allow_everyone_if_no_acl_found`` is false,
Kafka's default: a resource without bindings is denied.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.repositories import acls as repo
from app.adapters.db.session import read_session
from app.domain.acl import AclBinding
from app.domain.authorizer import Authorizer
from app.errors import ServiceUnavailable
from app.settings import ClusterSettings


class AclReader(Protocol):
    async def describe_acls(self, cluster: str) -> list[AclBinding]:
        """Every binding of the cluster, as Kafka stores them."""
        ...


class AclSource(Protocol):
    async def authorizer(self, cluster: str) -> Authorizer:
        """An authorizer over the cluster's current bindings."""
        ...


class ServiceAclSource:
    """Bindings from the database, rebuilt when the cluster's ``acl_version`` changed."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], super_users: frozenset[str]) -> None:
        self._sessionmaker = sessionmaker
        self._super_users = super_users
        self._cache: dict[str, tuple[int, Authorizer]] = {}

    async def authorizer(self, cluster: str) -> Authorizer:
        async with read_session(self._sessionmaker) as session:
            version = await repo.acl_version(session, cluster)
            cached = self._cache.get(cluster)
            if cached is not None and cached[0] == version:
                return cached[1]
            # Read after the version: a change committed in between is cached under the older version
            # and simply read again next time.
            bindings = await repo.list_bindings(session, cluster)
        built = Authorizer(bindings, self._super_users)
        self._cache[cluster] = (version, built)
        return built


class KafkaAclSource:
    """Bindings read from the cluster with DescribeAcls, kept for the cluster's ``acl_cache_seconds``."""

    def __init__(
        self,
        reader: AclReader,
        clusters: Mapping[str, ClusterSettings],
        super_users: frozenset[str],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._reader = reader
        self._clusters = clusters
        self._super_users = super_users
        self._clock = clock
        self._cache: dict[str, tuple[float, Authorizer]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def authorizer(self, cluster: str) -> Authorizer:
        ttl = self._clusters[cluster].acl_cache_seconds
        cached = self._cache.get(cluster)
        if cached is not None and self._clock() - cached[0] < ttl:
            return cached[1]
        async with self._locks.setdefault(cluster, asyncio.Lock()):
            cached = self._cache.get(cluster)
            if cached is not None and self._clock() - cached[0] < ttl:
                return cached[1]
            try:
                bindings = await self._reader.describe_acls(cluster)
            except Exception as exc:
                raise ServiceUnavailable(
                    f"The ACL bindings of cluster {cluster!r} cannot be read from Kafka right now."
                ) from exc
            built = Authorizer(bindings, self._super_users)
            self._cache[cluster] = (self._clock(), built)
            return built


class AclSources:
    """The source of each cluster, by its ``acl_source`` setting; clusters no longer configured (a stored
    deletion of a removed cluster) fall back to the database."""

    def __init__(self, clusters: Mapping[str, ClusterSettings], service: AclSource, kafka: AclSource) -> None:
        self._clusters = clusters
        self._service = service
        self._kafka = kafka

    def is_kafka(self, cluster: str) -> bool:
        settings = self._clusters.get(cluster)
        return settings is not None and settings.acl_source == "kafka"

    async def authorizer(self, cluster: str) -> Authorizer:
        return await (self._kafka if self.is_kafka(cluster) else self._service).authorizer(cluster)
