"""``acl_source: kafka`` on the real cluster: the service reads the broker's own ACL bindings (created
with Kafka's Admin API) and decides for a token's principal ``User:<sub>`` exactly as the broker decides
for the SCRAM user of that name. The broker is asked as that user (confluent-kafka's Admin client
authenticating as alice or bob); the service is asked through its HTTP API with that user's token."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)
from helpers.kafka_cluster import USERS, KafkaCluster
from helpers.kafka_faults import service_database
from helpers.real_kafka import (
    CLUSTER,
    SERVICE_ACLS,
    SERVICE_USER,
    cluster_settings,
    grant,
    topic_with_records,
)
from helpers.service_processes import ROOT, Service, service_env, start_service

TOPICS = ["kacl-orders.eu", "kacl-orders.audit", "kacl-payments", "kacl-public", "kacl-secret"]
PRINCIPALS = ["alice", "bob"]
ROOT_CLIENT = ("root", "root-secret")  # the service's own super user, for deletions others then read
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
LITERAL, PREFIXED = ResourcePatternType.LITERAL, ResourcePatternType.PREFIXED
# KIP-11 at work: a PREFIXED ALLOW, a DENY beating it, DELETE implying DESCRIBE, User:*, no binding at all.
BINDINGS = [
    ("User:alice", "kacl-orders.", PREFIXED, AclOperation.DELETE, ALLOW),
    ("User:alice", "kacl-orders.audit", LITERAL, AclOperation.DELETE, DENY),
    ("User:bob", "kacl-orders.", PREFIXED, AclOperation.DESCRIBE, ALLOW),
    ("User:bob", "kacl-payments", LITERAL, AclOperation.DELETE, ALLOW),
    ("User:*", "kacl-public", LITERAL, AclOperation.DESCRIBE, ALLOW),
]


@pytest.fixture(scope="module")
def acl_service(kafka_cluster: KafkaCluster) -> Iterator[Service]:
    """``kafka-purge serve`` with ``acl_source: kafka`` on the real cluster; alice and bob are dev clients
    and no super users, ``root`` is a super user."""
    grant(kafka_cluster, f"User:{SERVICE_USER}", SERVICE_ACLS)
    admin = AdminClient(kafka_cluster.client_config())
    bindings = [
        AclBinding(ResourceType.TOPIC, name, pattern, principal, "*", operation, permission)
        for principal, name, pattern, operation, permission in BINDINGS
    ]
    for future in admin.create_acls(bindings).values():
        future.result(timeout=30)
    for topic in TOPICS:
        topic_with_records(kafka_cluster, topic, 1, 20)
    with service_database() as url:
        yield from acl_service_on(kafka_cluster, url)
    filters = [
        AclBindingFilter(ResourceType.TOPIC, name, pattern, principal, "*", operation, permission)
        for principal, name, pattern, operation, permission in BINDINGS
    ]
    for future in admin.delete_acls(filters).values():
        future.result(timeout=30)


def acl_service_on(kafka_cluster: KafkaCluster, url: str) -> Iterator[Service]:
    env = service_env(url, kafka_cluster.bootstrap)
    settings = cluster_settings(kafka_cluster, acl_source="kafka", acl_cache_seconds=1)
    env["PURGE_CLUSTERS"] = json.dumps({CLUSTER: settings})
    clients = {user: USERS[user] for user in PRINCIPALS} | dict([ROOT_CLIENT])
    env["PURGE_AUTH_DEV_CLIENTS"] = json.dumps(clients)
    env["PURGE_SUPER_USERS"] = f"User:{ROOT_CLIENT[0]}"
    env["PURGE_DATABASE_POOL_SIZE"] = "2"
    service = start_service(env, ROOT)
    try:
        yield service
    finally:
        service.process.kill()


def token(service: Service, client: str, secret: str) -> str:
    response = httpx.post(
        f"{service.base}/oauth/token", data={"grant_type": "client_credentials"}, auth=(client, secret)
    )
    response.raise_for_status()
    return str(response.json()["access_token"])


def broker_allows_delete(cluster: KafkaCluster, user: str, topic: str) -> bool:
    """DeleteRecords up to offset 0 (nothing goes) as ``user``: the broker's own DELETE decision."""
    admin = AdminClient({**cluster.client_config(user), "log_level": 0})
    tp = TopicPartition(topic, 0, 0)
    try:
        admin.delete_records([tp])[tp].result(timeout=30)
    except KafkaException as exc:
        refusal = exc.args[0].name()
    else:
        return True
    if refusal == "_NOENT":
        # librdkafka found no leader to send to: the broker hid the topic (its metadata answered
        # TOPIC_AUTHORIZATION_FAILED), which a DeleteRecords would be refused with as well.
        assert not broker_allows_describe(cluster, user, topic)
    else:
        assert refusal == "TOPIC_AUTHORIZATION_FAILED"
    return False


def broker_allows_describe(cluster: KafkaCluster, user: str, topic: str) -> bool:
    """Metadata for the topic as ``user``: the broker's own DESCRIBE decision."""
    admin = AdminClient({**cluster.client_config(user), "log_level": 0})
    error = admin.list_topics(topic, timeout=30).topics[topic].error
    assert error is None or "AUTHORIZATION_FAILED" in error.name(), error
    return error is None


def service_decisions(service: Service, bearer: str, topic: str, offset: int) -> dict[str, bool]:
    """The service's decisions for the token's principal: a preview, a real deletion, the topic view."""
    headers = {"Authorization": f"Bearer {bearer}"}
    body = {
        "cluster": CLUSTER,
        "partitions": [{"topic": topic, "partition": 0, "offset": offset}],
        "reason": "acl_source kafka",
    }
    preview = httpx.post(f"{service.base}/v1/deletions", json={**body, "dry_run": True}, headers=headers)
    deletion = httpx.post(f"{service.base}/v1/deletions", json=body, headers=headers)
    view = httpx.get(f"{service.base}/v1/clusters/{CLUSTER}/topics/{topic}", headers=headers)
    for response, allowed in ((preview, 200), (deletion, 202), (view, 200)):
        assert response.status_code in (allowed, 403), response.text
    return {
        "preview": preview.status_code == 200,
        "delete": deletion.status_code == 202,
        "describe": view.status_code == 200,
    }


def test_the_services_decisions_are_the_brokers_for_the_same_principal(
    kafka_cluster: KafkaCluster, acl_service: Service
) -> None:
    decisions = {}
    for index, user in enumerate(PRINCIPALS):
        bearer = token(acl_service, user, USERS[user])
        for topic in TOPICS:
            service = service_decisions(acl_service, bearer, topic, offset=2 + index)
            delete = broker_allows_delete(kafka_cluster, user, topic)
            describe = broker_allows_describe(kafka_cluster, user, topic)
            assert service == {"preview": delete, "delete": delete, "describe": describe}, (user, topic)
            decisions[user, topic] = (delete, describe)
    # The bindings were read, not defaulted: each kind of decision occurs.
    assert decisions == {
        ("alice", "kacl-orders.eu"): (True, True),
        ("alice", "kacl-orders.audit"): (False, True),
        ("alice", "kacl-payments"): (False, False),
        ("alice", "kacl-public"): (False, True),
        ("alice", "kacl-secret"): (False, False),
        ("bob", "kacl-orders.eu"): (False, True),
        ("bob", "kacl-orders.audit"): (False, True),
        ("bob", "kacl-payments"): (True, True),
        ("bob", "kacl-public"): (False, True),
        ("bob", "kacl-secret"): (False, False),
    }


def test_reading_anothers_deletion_follows_the_brokers_describe_decision(
    kafka_cluster: KafkaCluster, acl_service: Service
) -> None:
    root = token(acl_service, *ROOT_CLIENT)
    created = {}
    for topic in TOPICS:
        body = {
            "cluster": CLUSTER,
            "partitions": [{"topic": topic, "partition": 0, "offset": 10}],
            "reason": "someone else's deletion",
        }
        response = httpx.post(
            f"{acl_service.base}/v1/deletions", json=body, headers={"Authorization": f"Bearer {root}"}
        )
        assert response.status_code == 202, response.text
        created[topic] = response.json()["id"]
    for user in PRINCIPALS:
        headers = {"Authorization": f"Bearer {token(acl_service, user, USERS[user])}"}
        for topic, deletion_id in created.items():
            seen = httpx.get(f"{acl_service.base}/v1/deletions/{deletion_id}", headers=headers)
            assert seen.status_code in (200, 404), seen.text
            assert (seen.status_code == 200) == broker_allows_describe(kafka_cluster, user, topic), (
                user,
                topic,
            )
