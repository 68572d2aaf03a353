"""KIP-762 end to end on the real cluster: a real Kafka Connect worker (distributed mode, SASL/SCRAM to the
brokers, basic auth on its REST API) runs ``FileStreamSinkConnector`` sinks created, paused, resumed,
failed, reconfigured and deleted through Connect's own REST API; the service, reading that worker with a
``password_file``, trims each topic to what every sink has committed, as Kafka's Admin API then reads
the log start offsets, and deletes nothing while a sink or Connect itself is unhealthy.

The worker and a service of its own (``PURGE_CONNECT`` names the worker three times: with the right
password, a wrong one, and a 2 s timeout) start once for the module; each test has its own topics and
connectors, deleted at its end."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from confluent_kafka import Producer
from helpers.connect_pipelines import Pipelines
from helpers.connect_worker import REST_USER, STARTED, ConnectWorker
from helpers.kafka_cluster import KafkaCluster
from helpers.kafka_faults import service_database
from helpers.real_kafka import (
    CLUSTER,
    SERVICE_ACLS,
    SERVICE_USER,
    cluster_settings,
    grant,
    log_start_offsets,
    topic_with_records,
)
from helpers.service_processes import ROOT, Service, service_env, start_service

WRONG_PASSWORD = "Wrong-Connect-Pa55"


@pytest.fixture(scope="module")
def connect_worker(kafka_cluster: KafkaCluster, request: pytest.FixtureRequest) -> Iterator[ConnectWorker]:
    """Started once for the module; its folder (log included) is kept when a test failed, and named with
    its start-up time in the terminal summary (``conftest.py``)."""
    worker = ConnectWorker(kafka_cluster, Path(tempfile.mkdtemp(prefix="kafka-purge-connect-")))
    STARTED.append(worker)
    try:
        worker.start()
        yield worker
    finally:
        worker.close()
        if worker.started_in and request.session.testsfailed == 0:
            shutil.rmtree(worker.folder, ignore_errors=True)


@pytest.fixture(scope="module")
def connect_service(kafka_cluster: KafkaCluster, connect_worker: ConnectWorker) -> Iterator[Service]:
    grant(kafka_cluster, f"User:{SERVICE_USER}", SERVICE_ACLS)
    right, wrong = connect_worker.folder / "connect-password", connect_worker.folder / "wrong-password"
    right.write_text(f"{REST_USER[1]}\n")
    wrong.write_text(f"{WRONG_PASSWORD}\n")
    worker = {"url": connect_worker.url, "kafka_cluster": CLUSTER, "username": REST_USER[0]}
    connect = {
        "pipelines": {**worker, "password_file": str(right)},
        "wrong": {**worker, "password_file": str(wrong)},
        "stalled": {**worker, "password_file": str(right), "timeout_seconds": 2},
    }
    with service_database() as url:
        env = service_env(url, kafka_cluster.bootstrap)
        env["PURGE_CLUSTERS"] = json.dumps({CLUSTER: cluster_settings(kafka_cluster)})
        env["PURGE_CONNECT"] = json.dumps(connect)
        service = start_service(env, ROOT)
        try:
            yield service
        finally:
            service.process.kill()


@pytest.fixture
def pipelines(
    kafka_cluster: KafkaCluster, connect_worker: ConnectWorker, connect_service: Service, tmp_path: Path
) -> Iterator[Pipelines]:
    made = Pipelines(kafka_cluster, connect_worker, connect_service, tmp_path)
    try:
        yield made
    finally:
        made.close()


def open_transaction(cluster: KafkaCluster, topic: str, partition: int, records: int) -> Producer:
    """``records`` written to the partition in a transaction left open: a ``read_committed`` consumer
    stops before them (at the last stable offset), a ``read_uncommitted`` one reads them."""
    producer = Producer(
        {**cluster.client_config(), "transactional.id": f"{topic}-open", "transaction.timeout.ms": 600_000}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    for index in range(records):
        producer.produce(topic, value=f"open {index}".encode(), partition=partition)
    assert producer.flush(30) == 0
    return producer


def more_records(cluster: KafkaCluster, topic: str, records: int) -> None:
    producer = Producer({**cluster.client_config(), "acks": "all"})
    for index in range(records):
        producer.produce(topic, value=f"more {index}".encode(), partition=0)
    assert producer.flush(30) == 0


def test_each_topic_is_trimmed_to_what_every_sink_committed(
    kafka_cluster: KafkaCluster, pipelines: Pipelines
) -> None:
    topic_with_records(kafka_cluster, "kc-orders", 2, 20)
    topic_with_records(kafka_cluster, "kc-payments", 1, 30)
    pending = open_transaction(kafka_cluster, "kc-orders", 0, 5)
    try:
        # Commits as connect-kc-files; reads the open transaction's records too.
        pipelines.sink("kc-files", "kc-orders,kc-payments")
        # Commits as its override group, and stops at the open transaction.
        overrides = {
            "consumer.override.group.id": "kc-lake-writers",
            "consumer.override.isolation.level": "read_committed",
        }
        pipelines.sink("kc-lake", "kc-orders", **overrides)
        pipelines.wait_committed("connect-kc-files", "kc-orders", {0: 25, 1: 20})
        pipelines.wait_committed("connect-kc-files", "kc-payments", {0: 30})
        pipelines.wait_committed("kc-lake-writers", "kc-orders", {0: 20, 1: 20})

        run = pipelines.create_policy("kc-trim", ["kc-files", "kc-lake"])
        counts = (run["status"], run["partitions_matched"], run["partitions_planned"])
        assert counts == ("submitted", 3, 3), run
        expected = {("kc-orders", 0): 20, ("kc-orders", 1): 20, ("kc-payments", 0): 30}
        assert pipelines.cuts(run) == expected
        assert log_start_offsets(kafka_cluster, "kc-orders", 2) == {0: 20, 1: 20}
        assert log_start_offsets(kafka_cluster, "kc-payments", 1) == {0: 30}
    finally:
        pending.abort_transaction(30)


def test_an_unhealthy_sink_holds_its_topics_until_it_runs_again(
    kafka_cluster: KafkaCluster, pipelines: Pipelines
) -> None:
    topic_with_records(kafka_cluster, "kc-paused", 2, 10)
    topic_with_records(kafka_cluster, "kc-failing", 1, 10)
    pipelines.sink("kc-pausing", "kc-paused")
    pipelines.sink("kc-broken", "kc-failing", file=pipelines.folder / "missing" / "out.txt")
    pipelines.wait_committed("connect-kc-pausing", "kc-paused", {0: 10, 1: 10})
    pipelines.worker.wait_states("kc-broken", "RUNNING", ("FAILED",))
    pipelines.worker.pause("kc-pausing")
    pipelines.worker.wait_states("kc-pausing", "PAUSED")

    run = pipelines.create_policy("kc-unhealthy", ["kc-pausing", "kc-broken"])
    assert (run["status"], run["skip_counts"]) == ("nothing_to_delete", {"connector_not_running": 3}), run
    assert {(s["topic"], s["partition"], s["detail"]) for s in run["skipped"]} == {
        ("kc-paused", 0, "connector kc-pausing is PAUSED"),
        ("kc-paused", 1, "connector kc-pausing is PAUSED"),
        ("kc-failing", 0, "connector kc-broken has task(s) FAILED"),
    }
    assert log_start_offsets(kafka_cluster, "kc-paused", 2) == {0: 0, 1: 0}

    pipelines.worker.resume("kc-pausing")
    pipelines.worker.wait_states("kc-pausing", "RUNNING")
    resumed = pipelines.sweep("kc-unhealthy")
    assert pipelines.cuts(resumed) == {("kc-paused", 0): 10, ("kc-paused", 1): 10}, resumed
    assert resumed["skip_counts"] == {"connector_not_running": 1}
    assert log_start_offsets(kafka_cluster, "kc-failing", 1) == {0: 0}

    # Reconfigured with a file it can write, the sink's task runs and reads the topic.
    pipelines.sink("kc-broken", "kc-failing")
    pipelines.worker.wait_states("kc-broken", "RUNNING")
    pipelines.wait_committed("connect-kc-broken", "kc-failing", {0: 10})
    repaired = pipelines.sweep("kc-unhealthy")
    assert pipelines.cuts(repaired) == {("kc-failing", 0): 10}, repaired
    assert log_start_offsets(kafka_cluster, "kc-failing", 1) == {0: 10}


def test_a_sink_is_followed_through_its_regex_a_new_config_and_its_deletion(
    kafka_cluster: KafkaCluster, pipelines: Pipelines
) -> None:
    for topic in ("kc-rx-1", "kc-rx-2", "kc-ry-1", "kc-kept"):
        topic_with_records(kafka_cluster, topic, 1, 10)
    pipelines.sink("kc-regex", regex=r"kc-rx-.*")
    pipelines.sink("kc-keeper", "kc-kept")
    for topic in ("kc-rx-1", "kc-rx-2"):
        pipelines.wait_committed("connect-kc-regex", topic, {0: 10})
    pipelines.wait_committed("connect-kc-keeper", "kc-kept", {0: 10})

    run = pipelines.create_policy("kc-regex", ["kc-regex", "kc-keeper"])
    assert pipelines.cuts(run) == {("kc-rx-1", 0): 10, ("kc-rx-2", 0): 10, ("kc-kept", 0): 10}, run
    assert log_start_offsets(kafka_cluster, "kc-ry-1", 1) == {0: 0}

    pipelines.sink("kc-regex", regex=r"kc-r[xy]-.*")
    pipelines.worker.wait_states("kc-regex", "RUNNING")
    pipelines.wait_committed("connect-kc-regex", "kc-ry-1", {0: 10})
    widened = pipelines.sweep("kc-regex")
    assert pipelines.cuts(widened) == {("kc-ry-1", 0): 10}, widened
    assert widened["partitions_matched"] == 4
    assert log_start_offsets(kafka_cluster, "kc-ry-1", 1) == {0: 10}

    # A named sink deleted: the topics it read are unknown, so the other sink's topic waits too.
    pipelines.worker.delete("kc-regex")
    more_records(kafka_cluster, "kc-kept", 5)
    pipelines.wait_committed("connect-kc-keeper", "kc-kept", {0: 15})
    gone = pipelines.sweep("kc-regex")
    assert (gone["status"], gone["deletion_ids"]) == ("nothing_to_delete", []), gone
    assert gone["skip_counts"] == {"connector_topics_unknown": 1}
    assert "connector kc-regex is missing: the topics it reads are unknown" in gone["warnings"]
    assert log_start_offsets(kafka_cluster, "kc-kept", 1) == {0: 10}


def test_a_topic_another_live_group_reads_is_kept(kafka_cluster: KafkaCluster, pipelines: Pipelines) -> None:
    topic_with_records(kafka_cluster, "kc-shared", 1, 10)
    topic_with_records(kafka_cluster, "kc-own", 1, 10)
    pipelines.sink("kc-named", "kc-shared,kc-own")
    pipelines.sink("kc-foreign", "kc-shared")  # live, and not one of the policy's consumers
    pipelines.wait_committed("connect-kc-named", "kc-shared", {0: 10})
    pipelines.wait_committed("connect-kc-named", "kc-own", {0: 10})
    pipelines.wait_committed("connect-kc-foreign", "kc-shared", {0: 10})

    run = pipelines.create_policy("kc-foreign", ["kc-named"])
    assert run["skip_counts"] == {"foreign_active_group": 1}, run
    warning = "active group(s) outside the policy's consumers on kc-shared: connect-kc-foreign"
    assert warning in run["warnings"]
    # The worker's own group (protocol connect) is active too and holds nothing back.
    assert pipelines.cuts(run) == {("kc-own", 0): 10}
    assert log_start_offsets(kafka_cluster, "kc-shared", 1) == {0: 0}


def test_connect_that_cannot_be_read_deletes_nothing(
    kafka_cluster: KafkaCluster, pipelines: Pipelines
) -> None:
    topic_with_records(kafka_cluster, "kc-closed", 1, 10)
    pipelines.sink("kc-closed", "kc-closed")
    pipelines.wait_committed("connect-kc-closed", "kc-closed", {0: 10})

    refused = pipelines.create_policy("kc-wrong", ["kc-closed"], cluster="wrong", names=["kc-closed"])
    assert (refused["status"], refused["deletion_ids"]) == ("failed", []), refused
    assert refused["error"].startswith("Kafka Connect unreadable, nothing deleted:")
    assert "answered 401" in refused["error"]
    shown = json.dumps(refused)
    assert WRONG_PASSWORD not in shown
    assert REST_USER[1] not in shown

    with pipelines.worker.frozen():
        stalled = pipelines.create_policy("kc-stalled", ["kc-closed"], cluster="stalled", names=["kc-closed"])
        unknown = {
            "name": "kc-unknown",
            "topics": {"read_by_connectors": True},
            "consumers": {"connect": {"cluster": "stalled", "connectors": ["kc-closed"]}},
        }
        refusal = httpx.post(pipelines.policies, json=unknown, headers=pipelines.headers, timeout=30)
    assert (stalled["status"], stalled["deletion_ids"]) == ("failed", []), stalled
    assert stalled["error"].startswith("Kafka Connect unreadable, nothing deleted:")
    assert refusal.status_code == 503, refusal.text
    assert refusal.headers["content-type"].startswith("application/problem+json")
    assert pipelines.worker.url not in refusal.text
    assert log_start_offsets(kafka_cluster, "kc-closed", 1) == {0: 0}

    # The worker answers again: the same policy deletes what the sink committed.
    assert pipelines.cuts(pipelines.sweep("kc-stalled")) == {("kc-closed", 0): 10}
    assert log_start_offsets(kafka_cluster, "kc-closed", 1) == {0: 10}
