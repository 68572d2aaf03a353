"""Reading a cluster's own ACL bindings with DescribeAcls (API key 29), for ``acl_source: kafka``.

One request with a match-everything filter (resource type, pattern type, operation and permission ANY;
name, principal and host null) returns every binding of the cluster. The service's Kafka principal needs
DESCRIBE on CLUSTER; without it the broker answers CLUSTER_AUTHORIZATION_FAILED, which is raised as
``AclReadFailed`` (the caller fails closed). Bindings on resource types the service does not decide on
(TRANSACTIONAL_ID, DELEGATION_TOKEN, USER) are skipped.

Each cluster gets its own lazily started client, separate from the DeleteRecords gateway's, so reading
ACLs never queues behind a DeleteRecords waiting in a broker's purgatory.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Mapping
from typing import Any

from aiokafka.protocol.admin import DescribeAclsRequest

from app.adapters.kafka.cluster_client import BrokerFailure, ClusterClient, ClusterUnreachable
from app.adapters.kafka.error_codes import ERROR_NAMES, VersionUnsupported
from app.domain.acl import AclBinding, AclValidationError, Operation, PatternType, Permission, ResourceType
from app.settings import ClusterSettings

log = logging.getLogger(__name__)

# Kafka's wire codes (ResourceType.java, PatternType.java, AclOperation.java, AclPermissionType.java).
ANY = 1
RESOURCE_TYPES = {2: ResourceType.TOPIC, 3: ResourceType.GROUP, 4: ResourceType.CLUSTER}
PATTERN_TYPES = {3: PatternType.LITERAL, 4: PatternType.PREFIXED}
OPERATIONS = {
    2: Operation.ALL,
    3: Operation.READ,
    4: Operation.WRITE,
    5: Operation.CREATE,
    6: Operation.DELETE,
    7: Operation.ALTER,
    8: Operation.DESCRIBE,
    9: Operation.CLUSTER_ACTION,
    10: Operation.DESCRIBE_CONFIGS,
    11: Operation.ALTER_CONFIGS,
    12: Operation.IDEMPOTENT_WRITE,
    13: Operation.CREATE_TOKENS,
    14: Operation.DESCRIBE_TOKENS,
}
PERMISSIONS = {2: Permission.DENY, 3: Permission.ALLOW}


class AclReadFailed(Exception):
    """The cluster's bindings could not be read (unreachable, or the service may not describe them)."""


def describe_all_request() -> Any:
    return DescribeAclsRequest(
        resource_type=ANY,
        resource_name=None,  # null matches any name on the wire
        resource_pattern_type_filter=ANY,
        principal=None,
        host=None,
        operation=ANY,
        permission_type=ANY,
    )


def _entries(response: Any) -> Iterator[tuple[int, str, int, str, str, int, int]]:
    version = response.API_VERSION
    for resource in response.resources:
        if version == 0:
            resource_type, name, acls = resource
            pattern = 3  # v0 knows LITERAL bindings only
        else:
            resource_type, name, pattern, acls = resource
        for principal, host, operation, permission in acls:
            yield resource_type, name, pattern, principal, host, operation, permission


def read_bindings(response: Any) -> list[AclBinding]:
    """The bindings of a DescribeAcls response; raises ``AclReadFailed`` on a response error."""
    if response.error_code:
        raise AclReadFailed(f"{ERROR_NAMES[response.error_code]}: {response.error_message or ''}".strip())
    bindings: list[AclBinding] = []
    for resource_type, name, pattern, principal, host, operation, permission in _entries(response):
        kinds = (RESOURCE_TYPES.get(resource_type), PATTERN_TYPES.get(pattern))
        values = (OPERATIONS.get(operation), PERMISSIONS.get(permission))
        if None in kinds or None in values:
            continue
        try:
            bindings.append(
                AclBinding(principal, host, values[0], values[1], kinds[0], name, kinds[1])  # type: ignore[arg-type]
            )
        except AclValidationError as exc:
            log.warning("skipping a Kafka ACL binding the service cannot use: %s", exc.detail)
    return bindings


class KafkaAclReader:
    """``describe_acls(cluster)``: every binding of a configured cluster, read from its brokers."""

    def __init__(self, clusters: Mapping[str, ClusterSettings]) -> None:
        self._settings = dict(clusters)
        self._clients: dict[str, ClusterClient] = {}
        self._locks = {name: asyncio.Lock() for name in self._settings}

    async def close(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        await asyncio.gather(*(client.close() for client in clients))

    async def describe_acls(self, cluster: str) -> list[AclBinding]:
        if cluster not in self._settings:
            raise AclReadFailed(f"unknown cluster {cluster!r}")
        async with self._locks[cluster]:
            try:
                return await self._describe(cluster)
            except (BrokerFailure, ClusterUnreachable, VersionUnsupported) as exc:
                await self._drop(cluster)
                raise AclReadFailed(f"cluster {cluster!r}: {exc}") from exc

    async def _describe(self, cluster: str) -> list[AclBinding]:
        client = self._clients.get(cluster)
        if client is None:
            client = ClusterClient(cluster, self._settings[cluster])
            await client.start()
            self._clients[cluster] = client
        metadata = await client.metadata([])
        errors: list[str] = []
        for node in metadata.brokers:
            try:
                response = await client.send(node, describe_all_request(), timeout_s=client.timeout_s)
            except BrokerFailure as exc:
                errors.append(f"broker {node}: {exc}")
                continue
            return read_bindings(response)
        raise AclReadFailed(f"cluster {cluster!r}: no broker answered DescribeAcls ({'; '.join(errors)})")

    async def _drop(self, cluster: str) -> None:
        client = self._clients.pop(cluster, None)
        if client is not None:
            await client.close()
