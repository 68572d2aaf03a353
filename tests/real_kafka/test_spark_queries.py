"""Consumed-data retention with Spark's own Kafka source (spark-sql-kafka-0-10 from Maven Central), on
PySpark 4.x (the main venv) and PySpark 3.5 (``.venv-spark35``): Structured Streaming queries read the
real cluster over SASL/SCRAM as ``bob`` (allowed to read topics and join groups, nothing else), in a Spark
job run as a child process on each line's Python (``helpers.spark_driver``).

- push mode: ``PurgeProgressListener`` moves the service's positions batch by batch; a policy deletes
  exactly what the query has committed (as Kafka's Admin API reads the log start offsets) and no more
  while the query stands still; the query restarted from its checkpoint keeps its positions and reads on
  from the log start offset without a data loss;
- pull mode: the service reads the checkpoint the real source wrote, and a policy follows what it
  committed, not what it planned (a batch whose sink failed holds deletion back until it is committed);
  the checkpoint of a continuous query (``processingTime`` trigger) that was stopped is read the same way;
- a policy naming a Spark query and a Kafka consumer group deletes only what the slower of them read.

PySpark 3.5's job loads the connector the way clients/spark/README.md tells users (``spark.jars.packages``
with the connector's Maven coordinates, ``ClientCredentials``); the 4.x job is given the resolved jar files
as ``spark.jars``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AclOperation, ResourceType
from helpers.kafka_cluster import USERS, KafkaCluster
from helpers.kafka_faults import eventually
from helpers.real_kafka import CLUSTER, finished, grant, log_start_offsets, topic_with_records
from helpers.real_kafka_specs import commit
from helpers.service_processes import CLIENT, ROOT, SECRET, Service
from helpers.spark_driver import (
    LINES,
    SparkDriver,
    connector_jars,
    coordinates,
    pyspark_version,
    start_driver,
)

from app.integrations.spark.checkpoint import read_committed_offsets

READER = "bob"
READER_ACLS = [
    (ResourceType.TOPIC, "*", AclOperation.READ),
    (ResourceType.TOPIC, "*", AclOperation.DESCRIBE),
    (ResourceType.GROUP, "*", AclOperation.READ),
]
README = ROOT / "clients" / "spark" / "README.md"


@pytest.fixture(scope="module", params=sorted(LINES), ids=lambda line: f"pyspark-{line}")
def driver(
    request: pytest.FixtureRequest, kafka_cluster: KafkaCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, SparkDriver]]:
    line = request.param
    python = LINES[line]
    if not python.exists():
        pytest.fail(f"{python} is missing: 'make spark-kafka' installs PySpark {line}'s venv")
    version = pyspark_version(python)
    jars = connector_jars(version)
    setup: dict[str, Any] = {"packages": coordinates(jars)} if line == "3.5" else {"jars": jars}
    grant(kafka_cluster, f"User:{READER}", READER_ACLS)
    job, ready = start_driver(python, setup, tmp_path_factory.mktemp(f"spark-{line}"))
    try:
        assert ready["pyspark"] == version
        assert ready["pyspark"].startswith(f"{line}.")
        yield line, job
    finally:
        job.close()


def query_run(kafka_cluster: KafkaCluster, topic: str, folder: Path, **extra: Any) -> dict[str, Any]:
    return {
        "run": {
            "bootstrap": kafka_cluster.bootstrap,
            "user": READER,
            "password": USERS[READER],
            "topic": topic,
            "checkpoint": str(folder / "checkpoint"),
            "sink": str(folder / "sink"),
            **extra,
        }
    }


def produce(cluster: KafkaCluster, topic: str, partitions: int, records: int) -> None:
    producer = Producer({**cluster.client_config(), "acks": "all"})
    for partition in range(partitions):
        for index in range(records):
            producer.produce(topic, value=f"more {index}".encode(), partition=partition)
    assert producer.flush(30) == 0


def positions(service: Service, headers: dict[str, str], name: str) -> dict[int, tuple[int, str, str, int]]:
    """The service's position of Spark consumer ``name`` per partition: (offset, query, run, batch)."""
    consumer = httpx.get(f"{service.base}/v1/clusters/{CLUSTER}/consumers/{name}", headers=headers)
    if consumer.status_code != 200:
        return {}
    return {
        p["partition"]: (p["offset"], p["query_id"], p["run_id"], p["batch_id"])
        for p in consumer.json()["progress"]
    }


def finished_runs(service: Service, headers: dict[str, str], policy: str) -> list[dict[str, Any]]:
    """The policy's finished sweeps, newest first (the first page)."""
    url = f"{service.base}/v1/clusters/{CLUSTER}/policies/{policy}/runs"
    return [r for r in httpx.get(url, headers=headers).json()["items"] if r["finished_at"]]


def two_more_sweeps(service: Service, headers: dict[str, str], policy: str) -> None:
    """Waits until two sweeps that started after this call have finished."""
    url = f"{service.base}/v1/clusters/{CLUSTER}/policies/{policy}/runs"
    newest = max((r["id"] for r in httpx.get(url, headers=headers).json()["items"]), default=0)

    def later() -> bool:
        items = httpx.get(url, headers=headers).json()["items"]
        return len([r for r in items if r["id"] > newest and r["finished_at"]]) >= 2

    eventually(later, what=f"two more sweeps of {policy}")


def unique_tag(line: str) -> str:
    """A suffix for the names of one test's topic, consumer and policy on the shared cluster and service."""
    return f"{line.replace('.', '')}-{uuid.uuid4().hex[:6]}"


def register_checkpoint(service: Service, headers: dict[str, str], name: str, checkpoint: Path) -> None:
    """Spark consumer ``name`` in pull mode: the service reads the query's checkpoint itself."""
    registered = {"name": name, "kind": "spark", "checkpoint_location": str(checkpoint)}
    created = httpx.post(f"{service.base}/v1/clusters/{CLUSTER}/consumers", json=registered, headers=headers)
    assert created.status_code == 201, created.text


def create_policy(
    service: Service,
    headers: dict[str, str],
    name: str,
    topic: str,
    consumer: str,
    groups: tuple[str, ...] = (),
) -> None:
    policy = {
        "name": name,
        "topics": {"names": [topic]},
        "consumers": {"spark": [consumer], "groups": list(groups)},
        "min_records": 1,
        "interval_seconds": 1,
    }
    created = httpx.post(f"{service.base}/v1/clusters/{CLUSTER}/policies", json=policy, headers=headers)
    assert created.status_code == 201, created.text


def ends(answer: dict[str, Any], topic: str) -> list[dict[int, int]]:
    return [{int(p): o for p, o in offsets[topic].items()} for _, offsets in answer["batches"]]


def test_push_mode_moves_positions_batch_by_batch_and_a_policy_deletes_what_was_committed(
    driver: tuple[str, SparkDriver],
    kafka_cluster: KafkaCluster,
    purge_service: Service,
    tmp_path: Path,
) -> None:
    line, job = driver
    tag = unique_tag(line)
    topic, consumer, policy = f"spark-push-{tag}", f"enricher-{tag}", f"spark-push-{tag}"
    topic_with_records(kafka_cluster, topic, 2, 10)
    token = purge_service.token()
    headers = {"Authorization": f"Bearer {token}"}
    create_policy(purge_service, headers, policy, topic, consumer)
    listener = {"service": purge_service.base, "client": CLIENT, "secret": SECRET, "consumer": consumer}
    run = query_run(kafka_cluster, topic, tmp_path, cluster=CLUSTER, **listener)

    # Two batches of 5 records a partition: the listener reports each.
    first = job.ask({"run": {**run["run"], "max_offsets": 10}})
    assert first["error"] is None, first["error"]
    assert ends(first, topic) == [{0: 5, 1: 5}, {0: 10, 1: 10}]
    assert (first["submitted"], first["warnings"], first["rows"]) == (2, [], 20)
    last_batch = first["batches"][-1][0]
    reported = (10, first["query_id"], first["run_id"], last_batch)
    assert positions(purge_service, headers, consumer) == {0: reported, 1: reported}
    checkpoint = read_committed_offsets(str(tmp_path / "checkpoint"))
    assert (checkpoint.batch_id, checkpoint.topic_offsets()) == (last_batch, {topic: {0: 10, 1: 10}})
    eventually(
        lambda: log_start_offsets(kafka_cluster, topic, 2) == {0: 10, 1: 10},
        what="the policy deleted what the query committed",
    )

    # New records the query has not read: the sweeps that follow delete nothing of them.
    produce(kafka_cluster, topic, 2, 10)
    two_more_sweeps(purge_service, headers, policy)
    assert log_start_offsets(kafka_cluster, topic, 2) == {0: 10, 1: 10}

    # Restarted from its checkpoint: the same query reads on from offset 10, the log start offset.
    second = job.ask(run)
    assert second["error"] is None, second["error"]
    assert second["query_id"] == first["query_id"]
    assert second["run_id"] != first["run_id"]
    assert second["batches"] == [[last_batch + 1, {topic: {"0": 20, "1": 20}}]]
    assert (second["rows"], second["distinct"], second["warnings"]) == (40, 40, [])
    moved = (20, first["query_id"], second["run_id"], last_batch + 1)
    assert positions(purge_service, headers, consumer) == {0: moved, 1: moved}
    eventually(
        lambda: log_start_offsets(kafka_cluster, topic, 2) == {0: 20, 1: 20},
        what="the policy followed the restarted query",
    )
    for sweep in finished_runs(purge_service, headers, policy):
        if sweep["status"] == "submitted":
            assert finished(purge_service, token, str(sweep["deletion_id"]))["status"] == "succeeded"


def test_pull_mode_follows_the_checkpoint_the_real_source_wrote(
    driver: tuple[str, SparkDriver],
    kafka_cluster: KafkaCluster,
    purge_service: Service,
    spark_checkpoints: Path,
) -> None:
    line, job = driver
    tag = unique_tag(line)
    topic, consumer, policy = f"spark-pull-{tag}", f"puller-{tag}", f"spark-pull-{tag}"
    folder = spark_checkpoints / tag
    topic_with_records(kafka_cluster, topic, 2, 10)
    headers = {"Authorization": f"Bearer {purge_service.token()}"}
    register_checkpoint(purge_service, headers, consumer, folder / "checkpoint")
    create_policy(purge_service, headers, policy, topic, consumer)
    sweeps = eventually(lambda: finished_runs(purge_service, headers, policy), what="a first sweep")
    assert sweeps[0]["skip_counts"] == {"offset_query_failed": 2}, "no checkpoint yet: nothing deleted"

    answer = job.ask(query_run(kafka_cluster, topic, folder, max_offsets=12))
    assert answer["error"] is None, answer["error"]
    assert ends(answer, topic) == [{0: 6, 1: 6}, {0: 10, 1: 10}]
    committed = read_committed_offsets(str(folder / "checkpoint"))
    assert (committed.topic_offsets(), committed.in_flight) == ({topic: {0: 10, 1: 10}}, ())
    eventually(
        lambda: log_start_offsets(kafka_cluster, topic, 2) == {0: 10, 1: 10},
        what="the policy deleted what the checkpoint committed",
    )

    # The sink fails: the next batch is planned (offsets/) and never committed (commits/); nothing more
    # is deleted. Run again with the sink back, the query commits it and the policy follows.
    produce(kafka_cluster, topic, 2, 10)
    failed = job.ask(query_run(kafka_cluster, topic, folder, failing_sink=True))
    assert "the sink is down" in str(failed["error"])
    planned = read_committed_offsets(str(folder / "checkpoint"))
    assert (planned.batch_id, planned.in_flight) == (committed.batch_id, (committed.batch_id + 1,))
    two_more_sweeps(purge_service, headers, policy)
    assert log_start_offsets(kafka_cluster, topic, 2) == {0: 10, 1: 10}
    again = job.ask(query_run(kafka_cluster, topic, folder))
    assert again["error"] is None, again["error"]
    assert (again["rows"], again["distinct"]) == (40, 40)
    assert read_committed_offsets(str(folder / "checkpoint")).topic_offsets() == {topic: {0: 20, 1: 20}}
    eventually(
        lambda: log_start_offsets(kafka_cluster, topic, 2) == {0: 20, 1: 20},
        what="the policy followed the committed retry",
    )


def test_pull_mode_reads_the_checkpoint_of_a_stopped_continuous_query(
    driver: tuple[str, SparkDriver],
    kafka_cluster: KafkaCluster,
    purge_service: Service,
    spark_checkpoints: Path,
) -> None:
    line, job = driver
    tag = unique_tag(line)
    topic, consumer, policy = f"spark-cont-{tag}", f"continuous-{tag}", f"spark-cont-{tag}"
    folder = spark_checkpoints / tag
    topic_with_records(kafka_cluster, topic, 2, 10)

    # A query triggered every 500 ms, stopped once it has read all there is: batches of 4 a partition.
    run = query_run(kafka_cluster, topic, folder, processing_time="500 milliseconds", max_offsets=8)
    answer = job.ask(run)
    assert answer["error"] is None, answer["error"]
    assert ends(answer, topic) == [{0: 4, 1: 4}, {0: 8, 1: 8}, {0: 10, 1: 10}]
    committed = read_committed_offsets(str(folder / "checkpoint"))
    assert (committed.topic_offsets(), committed.in_flight) == ({topic: {0: 10, 1: 10}}, ())

    headers = {"Authorization": f"Bearer {purge_service.token()}"}
    register_checkpoint(purge_service, headers, consumer, folder / "checkpoint")
    create_policy(purge_service, headers, policy, topic, consumer)
    eventually(
        lambda: log_start_offsets(kafka_cluster, topic, 2) == {0: 10, 1: 10},
        what="the policy deleted what the stopped query committed",
    )

    # Records that arrive while the query is stopped stay.
    produce(kafka_cluster, topic, 2, 5)
    two_more_sweeps(purge_service, headers, policy)
    assert log_start_offsets(kafka_cluster, topic, 2) == {0: 10, 1: 10}


def test_a_policy_waits_for_the_slower_of_a_query_and_a_kafka_group(
    driver: tuple[str, SparkDriver],
    kafka_cluster: KafkaCluster,
    purge_service: Service,
    tmp_path: Path,
) -> None:
    line, job = driver
    tag = unique_tag(line)
    topic, consumer, group = f"spark-mixed-{tag}", f"fast-{tag}", f"slow-{tag}"
    topic_with_records(kafka_cluster, topic, 2, 10)
    commit(kafka_cluster, group, topic, {0: 3, 1: 4})
    headers = {"Authorization": f"Bearer {purge_service.token()}"}
    create_policy(purge_service, headers, topic, topic, consumer, groups=(group,))
    listener = {"service": purge_service.base, "client": CLIENT, "secret": SECRET, "consumer": consumer}

    # The query reads everything; the group has read 3 and 4 records: the group bounds the deletion.
    answer = job.ask(query_run(kafka_cluster, topic, tmp_path, cluster=CLUSTER, **listener))
    assert answer["error"] is None, answer["error"]
    assert ends(answer, topic)[-1] == {0: 10, 1: 10}
    eventually(
        lambda: log_start_offsets(kafka_cluster, topic, 2) == {0: 3, 1: 4},
        what="the policy deleted what the slower group read",
    )
    two_more_sweeps(purge_service, headers, topic)
    assert log_start_offsets(kafka_cluster, topic, 2) == {0: 3, 1: 4}

    # The group reads on, past the query on partition 0 of a new batch: each partition follows the slower.
    produce(kafka_cluster, topic, 2, 5)
    commit(kafka_cluster, group, topic, {0: 12, 1: 7})
    eventually(
        lambda: log_start_offsets(kafka_cluster, topic, 2) == {0: 10, 1: 7},
        what="each partition trimmed to the slower of the query and the group",
    )


def test_the_readme_names_the_connector_the_pyspark_35_job_loads(driver: tuple[str, SparkDriver]) -> None:
    line, _ = driver
    readme = README.read_text(encoding="utf-8")
    assert "spark.jars.packages" in readme
    scala = "2.12" if line == "3.5" else "2.13"
    assert f"--packages org.apache.spark:spark-sql-kafka-0-10_{scala}:{line}" in readme
