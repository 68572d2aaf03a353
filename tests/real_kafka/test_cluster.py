"""The cluster the real-Kafka tests run against is configured as production clusters are: three nodes,
SASL/SCRAM-SHA-512 only, the StandardAuthorizer (a user without ACLs sees nothing), replication factor 3
and ``min.insync.replicas=2``, Kafka's default follower fetch wait."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
from helpers.kafka_cluster import KafkaCluster


def test_three_nodes_with_production_settings(kafka_cluster: KafkaCluster) -> None:
    admin = AdminClient(kafka_cluster.client_config())
    assert sorted(admin.list_topics(timeout=10).brokers) == [1, 2, 3]
    resource = ConfigResource(ConfigResource.Type.BROKER, "1")
    config = admin.describe_configs([resource])[resource].result(timeout=10)
    assert config["min.insync.replicas"].value == "2"
    assert config["default.replication.factor"].value == "3"
    assert config["replica.fetch.wait.max.ms"].value == "500"
    assert config["authorizer.class.name"].value == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def test_a_wrong_password_is_refused(kafka_cluster: KafkaCluster) -> None:
    errors: list[KafkaError] = []
    config = {**kafka_cluster.client_config("alice"), "sasl.password": "wrong", "error_cb": errors.append}
    admin = AdminClient(config)
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=10)
    admin.poll(1)  # serves the error callback
    assert KafkaError._AUTHENTICATION in {error.code() for error in errors}


def test_a_user_without_acls_sees_no_topic(kafka_cluster: KafkaCluster) -> None:
    admin = AdminClient(kafka_cluster.client_config())
    admin.create_topics([NewTopic("cluster-check", 1)])["cluster-check"].result(timeout=30)
    visible = AdminClient(kafka_cluster.client_config("bob")).list_topics(timeout=10).topics
    assert "cluster-check" not in visible
    assert "cluster-check" in admin.list_topics(timeout=10).topics
