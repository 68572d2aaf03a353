"""Deletions through the service's HTTP API on the real cluster: what the service reports per partition
is what Kafka's own Admin client reads afterwards."""

from __future__ import annotations

import httpx
from helpers.kafka_cluster import KafkaCluster
from helpers.real_kafka import CLUSTER, finished, log_start_offsets, topic_with_records
from helpers.service_processes import Service


def test_deletion_by_offset_moves_kafkas_log_start_offsets(
    kafka_cluster: KafkaCluster, purge_service: Service
) -> None:
    topic_with_records(kafka_cluster, "by-offset", 3, 100)
    token = purge_service.token()
    body = {
        "cluster": CLUSTER,
        "partitions": [{"topic": "by-offset", "partition": p, "offset": 10 * (p + 1)} for p in range(3)],
        "reason": "real Kafka: deletion by offset",
    }
    response = httpx.post(
        f"{purge_service.base}/v1/deletions", json=body, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code in (201, 202), response.text
    deletion = finished(purge_service, token, response.json()["id"])
    assert deletion["status"] == "succeeded", deletion
    partitions = httpx.get(
        f"{purge_service.base}/v1/deletions/{deletion['id']}/partitions",
        headers={"Authorization": f"Bearer {token}"},
    ).json()
    reported = {p["partition"]: p["low_watermark"] for p in partitions["items"]}
    assert reported == {0: 10, 1: 20, 2: 30}
    assert log_start_offsets(kafka_cluster, "by-offset", 3) == reported
