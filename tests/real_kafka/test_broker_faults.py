"""Deletions through the service's HTTP API while brokers of the real cluster fail: what the service
reports is what Kafka did, and the log start offset Kafka's Admin API reads afterwards is the requested one.

What real Kafka (4.4, KRaft) does, which these tests pin down:
- The leader's low watermark is the minimum log start offset over the replicas on brokers the controller
  has not fenced (``Partition.lowWatermarkIfLeader``), not over the ISR. A follower shut down cleanly
  leaves the ISR and is fenced during its controlled shutdown, so it holds no deletion back; a follower
  that hangs (or crashed) still counts until the controller fences it after ``broker.session.timeout.ms``
  (9 s by default), long before ``replica.lag.time.max.ms`` (30 s) would shrink the ISR.
- A new leader whose high watermark trails the old leader's refuses DeleteRecords with
  ``OFFSET_OUT_OF_RANGE`` and ListOffsets LATEST with ``OFFSET_NOT_AVAILABLE``. With eligible leader
  replicas (on by default since Kafka 4.1) a leader whose ISR is below ``min.insync.replicas`` does not
  advance its high watermark, so on a topic with two replicas the lag lasts until the old leader is back.

Every test restores the shared cluster (all nodes running and serving) whatever happens.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest
from confluent_kafka import KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec
from helpers.kafka_cluster import KafkaCluster
from helpers.kafka_faults import (
    StagedService,
    eventually,
    kafka_offsets,
    log_start_increments,
    partition_row,
    pause,
    placement,
    restored,
    resume,
    service_database,
    start_staged,
    submit,
)
from helpers.real_kafka import (
    CLUSTER,
    SERVICE_ACLS,
    SERVICE_USER,
    cluster_settings,
    finished,
    grant,
    topic_with_records,
)
from helpers.service_processes import Service, service_env

# Longer than the controller's fencing of a dead broker plus a node's restart on a busy 2-core machine.
LONG_MS = 180_000
UNANSWERED = {"pending", "in_progress"}
CLIENT = "client delete records request"  # why a leader's log start offset moved (server.log)


@pytest.fixture(scope="module")
def staged(kafka_cluster: KafkaCluster) -> Iterator[StagedService]:
    """The service as ``purge_service`` runs it, split in an API-only and a workers-only instance."""
    grant(kafka_cluster, f"User:{SERVICE_USER}", SERVICE_ACLS)
    with service_database() as url:
        env = service_env(url, kafka_cluster.bootstrap)
        env["PURGE_CLUSTERS"] = json.dumps({CLUSTER: cluster_settings(kafka_cluster)})
        env["PURGE_DATABASE_POOL_SIZE"] = "2"  # two processes beside the session's service
        service = start_staged(env)
        try:
            yield service
        finally:
            service.resume()
            service.api.process.kill()
            service.worker.process.kill()


def routed(staged: StagedService, token: str, topic: str) -> None:
    """A first deletion (offset 1) through the staged instances while every broker answers: the executor
    then routes the topic's next DeleteRecords with the leaders it learned, as Kafka's clients do, instead
    of asking for metadata, which may go to the broker a test is about to pause and wait there for the
    whole request timeout."""
    deletion_id = submit(staged.api, token, deletion(topic, 1, 30_000, "routes"))
    assert finished(staged.api, token, deletion_id)["status"] == "succeeded"


def deletion(topic: str, offset: int, timeout_ms: int, reason: str) -> dict[str, object]:
    return {
        "cluster": CLUSTER,
        "partitions": [{"topic": topic, "partition": 0, "offset": offset}],
        "timeout_ms": timeout_ms,
        "reason": reason,
    }


def test_a_follower_shut_down_cleanly_holds_no_deletion_back(
    kafka_cluster: KafkaCluster, purge_service: Service
) -> None:
    topic = "faults-follower-stopped"
    topic_with_records(kafka_cluster, topic, 1, 100)
    replicas = placement(kafka_cluster, topic)
    follower = replicas.followers()[0]
    token = purge_service.token()
    with restored(kafka_cluster):
        kafka_cluster.stop_node(follower)
        eventually(lambda: follower not in placement(kafka_cluster, topic).isr, what="ISR shrink")
        deletion_id = submit(purge_service, token, deletion(topic, 40, 30_000, "follower stopped"))
        assert finished(purge_service, token, deletion_id)["status"] == "succeeded"
        row = partition_row(purge_service, token, deletion_id)
        assert (row["status"], row["low_watermark"], row["error_code"]) == ("succeeded", 40, None)
        assert row["attempts"] == 1  # nothing waited for the stopped follower
    eventually(lambda: sorted(placement(kafka_cluster, topic).isr) == sorted(replicas.replicas), what="ISR")
    assert kafka_offsets(kafka_cluster, topic) == (40, 100)


def test_a_hung_follower_holds_the_deletion_leader_truncated_until_it_fetches_again(
    kafka_cluster: KafkaCluster, staged: StagedService
) -> None:
    topic = "faults-follower-hung"
    topic_with_records(kafka_cluster, topic, 1, 100)
    follower = placement(kafka_cluster, topic).followers()[0]
    token = staged.api.token()
    routed(staged, token, topic)
    with restored(kafka_cluster):
        with staged.held():
            # 8 s: the first send lets the leader wait about half of it, well inside the 9 s after which
            # the controller would fence the paused follower and the low watermark stop counting it.
            deletion_id = submit(staged.api, token, deletion(topic, 40, 8_000, "follower hung"))
            pause(kafka_cluster, follower)
        row = eventually(
            lambda: (r := partition_row(staged.api, token, deletion_id))["status"] not in UNANSWERED and r,
            timeout=20,
            what="the leader's answer",
        )
        resume(kafka_cluster, follower)
        # The leader truncated and answered REQUEST_TIMED_OUT with the paused follower's log start offset
        # (1, from the first deletion).
        assert row["status"] == "leader_truncated", row
        assert (row["low_watermark"], row["error_code"]) == (1, None)
        assert finished(staged.api, token, deletion_id)["status"] == "succeeded"
    row = partition_row(staged.api, token, deletion_id)
    assert (row["status"], row["low_watermark"]) == ("succeeded", 40)
    assert row["attempts"] >= 2
    assert kafka_offsets(kafka_cluster, topic) == (40, 100)


def test_a_leader_killed_mid_deletion_gets_the_deletion_resent_to_the_new_leader(
    kafka_cluster: KafkaCluster, staged: StagedService
) -> None:
    topic = "faults-leader-killed"
    topic_with_records(kafka_cluster, topic, 1, 100)
    before = placement(kafka_cluster, topic)
    successor = before.followers()[0]  # KRaft elects the first ISR replica in assignment order
    token = staged.api.token()
    routed(staged, token, topic)
    with restored(kafka_cluster):
        with staged.held():
            deletion_id = submit(staged.api, token, deletion(topic, 60, LONG_MS, "leader killed"))
            pause(kafka_cluster, successor)
            # Its outstanding fetch is answered within replica.fetch.wait.max.ms (500 ms), before the
            # deletion is sent: the successor never learns the leader's new log start offset.
            time.sleep(1.0)
        # The leader truncates; the request waits in its purgatory for the paused successor.
        eventually(
            lambda: f"60 due to {CLIENT}" in log_start_increments(kafka_cluster, before.leader, topic),
            what="the leader's truncation",
        )
        kafka_cluster.kill_node(before.leader)
        resume(kafka_cluster, successor)
        assert finished(staged.api, token, deletion_id, timeout=LONG_MS / 1000)["status"] == "succeeded"
        assert placement(kafka_cluster, topic).leader == successor
        # The successor's log start offset moved only when it took the resent DeleteRecords as the leader.
        moves = log_start_increments(kafka_cluster, successor, topic)
        assert [move for move in moves if move.startswith("60 ")] == [f"60 due to {CLIENT}"], moves
        row = partition_row(staged.api, token, deletion_id)
        assert (row["status"], row["low_watermark"]) == ("succeeded", 60)
        assert row["attempts"] >= 2
        assert kafka_offsets(kafka_cluster, topic) == (60, 100)


def test_a_lagging_new_leader_answering_offset_out_of_range_is_retried_until_it_caught_up(
    kafka_cluster: KafkaCluster, purge_service: Service
) -> None:
    topic = "faults-lagging-leader"
    admin = AdminClient(kafka_cluster.client_config())
    admin.create_topics([NewTopic(topic, 1, replication_factor=2)])[topic].result(timeout=30)
    eventually(lambda: len(placement(kafka_cluster, topic).isr) == 2, what="both replicas in sync")
    leader = placement(kafka_cluster, topic).leader
    token = purge_service.token()
    producer = Producer({**kafka_cluster.client_config(), "acks": "all", "linger.ms": 0})
    body = deletion(topic, 100, LONG_MS, "lagging leader")
    with restored(kafka_cluster):
        for index in range(100):
            producer.produce(topic, value=f"record {index}".encode(), partition=0)
        assert producer.flush(30) == 0
        # The leader's high watermark is 100 now; the follower learns it from the answer to its next
        # fetch, which the leader holds up to replica.fetch.wait.max.ms (500 ms): killed at once, the
        # leader takes that answer with it.
        kafka_cluster.kill_node(leader)
        # Until the controller fences the dead broker, the groups it coordinates cannot be listed: the
        # unconsumed-records guard fails closed.
        refused = httpx.post(
            f"{purge_service.base}/v1/deletions", json=body, headers={"Authorization": f"Bearer {token}"}
        )
        assert refused.status_code == 503, refused.text
        eventually(lambda: placement(kafka_cluster, topic).leader not in (leader, -1), what="a new leader")
        deletion_id = submit(purge_service, token, body)
        row = eventually(
            lambda: (
                (r := partition_row(purge_service, token, deletion_id))["error_code"]
                == "OFFSET_NOT_AVAILABLE"
                and r
            ),
            timeout=60,
            what="the new leader's answer",
        )
        assert row["status"] == "in_progress", row
        # Kafka's own Admin client gets the same answers from the new leader.
        tp = TopicPartition(topic, 0)
        with pytest.raises(KafkaException, match="OFFSET_NOT_AVAILABLE"):
            admin.list_offsets({tp: OffsetSpec.latest()})[tp].result(timeout=30)
        with pytest.raises(KafkaException, match="OFFSET_OUT_OF_RANGE"):
            admin.delete_records([TopicPartition(topic, 0, 100)])[tp].result(timeout=30)
        kafka_cluster.start_node(leader)
        kafka_cluster.wait_ready()
        assert finished(purge_service, token, deletion_id, timeout=LONG_MS / 1000)["status"] == "succeeded"
    row = partition_row(purge_service, token, deletion_id)
    assert (row["status"], row["low_watermark"], row["error_code"]) == ("succeeded", 100, None)
    assert kafka_offsets(kafka_cluster, topic) == (100, 100)
