"""Who may create, see, change and delete a retention policy (KIP-11, ``Runtime.authorization``).

- create: DELETE on every topic the policy covers now (a prefix: a binding covering the whole prefix,
  present and future topics; a regex: every topic matching now; names: each name; topics read by
  connectors alone: every topic the sinks read now, as Connect's REST API answers) and DESCRIBE on
  every consumer it names (Kafka groups and Spark consumers alike are GROUP resources; ``all_groups``
  covers every group and Connect sinks commit under groups their configs name, so either needs
  DESCRIBE on CLUSTER);
- see (get, list, runs): be the owner, or hold DESCRIBE on CLUSTER (ALTER implies it); any other caller
  gets 404, and lists leave the policy out;
- change or delete: be the owner or hold ALTER on CLUSTER (403, audited, for a caller who may see the
  policy), and for a change of its topics or consumers also the create checks on what the changed
  policy covers. The owner never
  changes: sweeps keep running with the owner's rights, re-authorized at every sweep.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from app.adapters.db.retention_models import RetentionPolicy
from app.auth import Principal
from app.domain.acl import Operation
from app.domain.connect import ConnectUnavailable
from app.domain.topic_patterns import TopicSelector
from app.errors import FieldError, NotFound, ServiceUnavailable, ValidationFailed
from app.services.retention.connect import connector_topics, policy_sinks
from app.services.runtime import Runtime

log = logging.getLogger("kafka_purge.retention")


async def _authorize_connector_topics(
    runtime: Runtime, principal: Principal, cluster: str, consumers: Mapping[str, Any], request_id: str
) -> None:
    try:
        reading = await policy_sinks(runtime, consumers, await runtime.gateway.list_topics(cluster))
    except ConnectUnavailable as exc:
        # The problem names no address: the Connect cluster's URL is the operator's, not the caller's.
        log.warning("Kafka Connect unreadable while a policy was authorized: %s", exc)
        detail = f"Kafka Connect cluster {consumers['connect']['cluster']!r} cannot be read now"
        raise ServiceUnavailable(f"{detail}: the topics its sinks read are unknown") from None
    names = connector_topics(reading) if reading is not None else set()
    if names:
        await runtime.authorization.check_delete_topics(
            principal, cluster, sorted(names), request_id=request_id
        )


async def authorize_policy_topics(
    runtime: Runtime,
    principal: Principal,
    cluster: str,
    topics: Mapping[str, Any],
    request_id: str,
    consumers: Mapping[str, Any] | None = None,
) -> None:
    """DELETE on the topics a selection (as stored: prefix, regex or names) covers; raises Forbidden."""
    authorization = runtime.authorization
    if topics.get("read_by_connectors") and not any(topics.get(k) for k in ("prefix", "regex", "names")):
        await _authorize_connector_topics(runtime, principal, cluster, consumers or {}, request_id)
        return
    if topics.get("prefix") is not None:
        await authorization.check_delete_prefix(principal, cluster, topics["prefix"], request_id=request_id)
        return
    if topics.get("names"):
        names = set(topics["names"])
    else:
        try:
            selector = TopicSelector(regex=topics.get("regex"))
        except ValueError as exc:  # a stored regex from before RE2: the caller must give a new selection
            raise ValidationFailed(
                f"the policy's regex cannot be used: {exc}", errors=[FieldError("#/topics/regex", str(exc))]
            ) from None
        names = set(selector.select(await runtime.gateway.list_topics(cluster)))
    if names:
        await authorization.check_delete_topics(principal, cluster, sorted(names), request_id=request_id)


async def authorize_policy_consumers(
    runtime: Runtime, principal: Principal, cluster: str, consumers: Mapping[str, Any], request_id: str
) -> None:
    """DESCRIBE on every named group and Spark consumer (GROUP resources), or on CLUSTER for all groups."""
    authorization = runtime.authorization
    if consumers.get("all_groups") or consumers.get("connect") is not None:
        await authorization.check_cluster(principal, cluster, Operation.DESCRIBE, request_id=request_id)
    groups: Sequence[str] = sorted({*consumers.get("groups", ()), *consumers.get("spark", ())})
    if groups:
        await authorization.check_groups(
            principal, cluster, Operation.DESCRIBE, groups, request_id=request_id
        )


async def authorize_coverage(
    runtime: Runtime,
    principal: Principal,
    cluster: str,
    topics: Mapping[str, Any],
    consumers: Mapping[str, Any],
    request_id: str,
) -> None:
    await authorize_policy_topics(runtime, principal, cluster, topics, request_id, consumers)
    await authorize_policy_consumers(runtime, principal, cluster, consumers, request_id)


async def visible_policies(
    runtime: Runtime, principal: Principal, cluster: str, policies: Sequence[RetentionPolicy]
) -> list[RetentionPolicy]:
    """The policies the caller owns, or all of them with DESCRIBE on CLUSTER."""
    if await runtime.authorization.may_on_cluster(principal, cluster, Operation.DESCRIBE):
        return list(policies)
    return [policy for policy in policies if policy.owner == principal.name]


async def require_visible(
    runtime: Runtime, principal: Principal, policy: RetentionPolicy | None, name: str, cluster: str
) -> RetentionPolicy:
    """The policy, or 404 when it does not exist or the caller may not see it."""
    if policy is None or not await visible_policies(runtime, principal, cluster, [policy]):
        raise NotFound(f"No policy {name!r} on {cluster!r}.")
    return policy


async def authorize_management(
    runtime: Runtime, principal: Principal, policy: RetentionPolicy, request_id: str
) -> None:
    """The owner may change or delete a policy; anyone else needs ALTER on CLUSTER (raises Forbidden)."""
    if policy.owner != principal.name:
        await runtime.authorization.check_cluster(
            principal, policy.cluster, Operation.ALTER, request_id=request_id
        )
