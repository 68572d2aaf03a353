"""End to end on real PySpark: a Structured Streaming query reads an intermediate topic from the emulated
cluster (test-only source), writes a file sink and reports its progress with ``PurgeProgressListener`` to
the real service (a ``kafka-purge serve`` process). A retention policy over that Spark consumer and one
Kafka group deletes exactly what both consumed, the slower group holds deletion back, and the query
keeps running across the sweeps with every record reaching the sink exactly once."""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from helpers.spark import ROOT, Emulator, running, wait_until

from kafka_purge_spark import ClientCredentials, PurgeProgressListener
from kafka_purge_spark.tokens import authorize

SECRET = "etl-secret"


@pytest.fixture
def service(emulator: Emulator, tmp_path: Path) -> Iterator[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PURGE_")}
    env.update(
        PYTHONPATH=str(ROOT),
        PURGE_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'purge.db'}",
        PURGE_AUTH_DEV_ISSUER="true",
        PURGE_AUTH_DEV_CLIENTS=json.dumps({"etl": SECRET}),
        PURGE_SUPER_USERS="User:etl",
        PURGE_CLUSTERS=json.dumps({"demo": {"bootstrap_servers": emulator.bootstrap}}),
        PURGE_WORKER_POLL_INTERVAL_SECONDS="0.1",
        PURGE_SPARK_CHECKPOINT_ROOTS=str(tmp_path),
    )
    command = [sys.executable, "-m", "app", "serve", "--port", "0"]
    with running(command, env, tmp_path) as process:
        port = process.wait_for_line(r"serving HTTP on [\d.]+:(\d+)").group(1)
        yield f"http://127.0.0.1:{port}"


def etl_api(credentials: ClientCredentials, service: str) -> httpx2.Client:
    """A client of the service authenticated as ``etl``, with the same token handling as the listener."""
    api = credentials.client(base_url=service, timeout=10)
    authorize(api)
    return api


def produce_wave(emulator: Emulator, topic: str, wave: int, per_partition: int = 10) -> None:
    emulator.produce(topic, [f"w{wave}-{i}".encode() for i in range(2 * per_partition)], 2)


def log_start_offsets(emulator: Emulator, topic: str) -> dict[int, int]:
    return emulator.log_start_offsets(topic)


def spark_positions(api: httpx2.Client, name: str) -> dict[int, int]:
    consumer = api.get(f"/v1/clusters/demo/consumers/{name}")
    if consumer.status_code != 200:
        return {}
    return {p["partition"]: p["offset"] for p in consumer.json()["progress"]}


def submitted_runs(api: httpx2.Client) -> list[dict[str, Any]]:
    runs = api.get("/v1/clusters/demo/policies/e2e/runs").json()["items"]
    return [r for r in runs if r["status"] == "submitted"]


def test_policy_deletes_what_spark_and_a_group_consumed(
    spark: Any, emulator: Emulator, service: str, tmp_path: Path
) -> None:
    topic = f"inter.e2e-{uuid.uuid4().hex[:8]}"
    emulator.create_topic(topic, 2)
    credentials = ClientCredentials(f"{service}/oauth/token", "etl", SECRET)
    api = etl_api(credentials, service)
    listener = PurgeProgressListener(service, "enricher", cluster="demo", credentials=credentials)
    spark.streams.addListener(listener)
    policy = {
        "name": "e2e",
        "topics": {"names": [topic]},
        "consumers": {"groups": ["slow"], "spark": ["enricher"]},
        "interval_seconds": 1,
    }
    assert api.post("/v1/clusters/demo/policies", json=policy).status_code == 201
    produce_wave(emulator, topic, 0)
    query = (
        spark.readStream.format("testkafka")
        .option("bootstrap", emulator.bootstrap)
        .option("topic", topic)
        .load()
        .writeStream.format("parquet")
        .option("path", str(tmp_path / "sink"))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="1 second")
        .start()
    )
    try:
        # The slow group has read 4 records per partition; Spark reads on. Deletion stops at 4.
        emulator.commit("slow", {(topic, 0): 4, (topic, 1): 4})
        wait_until(lambda: spark_positions(api, "enricher") == {0: 10, 1: 10}, message="Spark reported")
        wait_until(
            lambda: log_start_offsets(emulator, topic) == {0: 4, 1: 4}, message="deleted up to the group"
        )
        produce_wave(emulator, topic, 1)
        runs_before = len(api.get("/v1/clusters/demo/policies/e2e/runs").json()["items"])
        wait_until(
            lambda: len(api.get("/v1/clusters/demo/policies/e2e/runs").json()["items"]) >= runs_before + 2,
            message="two more sweeps",
        )
        assert log_start_offsets(emulator, topic) == {0: 4, 1: 4}, "the slow group must hold deletion back"

        # The group catches up with the high watermark, then the next wave: each time deletion follows the
        # lower of the two positions.
        emulator.commit("slow", {(topic, 0): 20, (topic, 1): 20})
        wait_until(lambda: spark_positions(api, "enricher") == {0: 20, 1: 20}, message="Spark read wave 1")
        wait_until(lambda: log_start_offsets(emulator, topic) == {0: 20, 1: 20}, message="deleted wave 1")
        produce_wave(emulator, topic, 2)
        emulator.commit("slow", {(topic, 0): 30, (topic, 1): 30})
        wait_until(lambda: spark_positions(api, "enricher") == {0: 30, 1: 30}, message="Spark read wave 2")
        wait_until(
            lambda: log_start_offsets(emulator, topic) == {0: 30, 1: 30}, message="everything consumed"
        )
        assert query.isActive
        assert query.exception() is None
    finally:
        query.stop()
        spark.streams.removeListener(listener)
        listener.sender.close()
    runs = submitted_runs(api)
    assert len(runs) >= 3
    for run in runs:
        # The leaders' log start offsets move first; a deletion succeeds once its followers confirm (at
        # Kafka's timing, when their parked fetches return).
        path = f"/v1/deletions/{run['deletion_id']}"
        deletion = wait_until(
            lambda path=path: (d := api.get(path).json())["status"] not in ("pending", "in_progress") and d,
            message="the sweep's deletion finished",
        )
        assert deletion["reason"] == "policy e2e"
        assert deletion["status"] == "succeeded", deletion
    rows = spark.read.parquet(str(tmp_path / "sink")).select("partition", "offset", "value").collect()
    assert len(rows) == 60
    assert {(r.partition, r.offset) for r in rows} == {(p, o) for p in (0, 1) for o in range(30)}
    api.close()


def test_pull_mode_follows_the_real_checkpoint(
    spark: Any, emulator: Emulator, service: str, tmp_path: Path
) -> None:
    """No listener: the service reads the query's checkpoint itself (commits/ decides, not offsets/)."""
    topic = f"inter.pull-{uuid.uuid4().hex[:8]}"
    emulator.create_topic(topic, 2)
    api = etl_api(ClientCredentials(f"{service}/oauth/token", "etl", SECRET), service)
    checkpoint = tmp_path / "checkpoint"
    consumer = {"name": "puller", "kind": "spark", "checkpoint_location": str(checkpoint)}
    assert api.post("/v1/clusters/demo/consumers", json=consumer).status_code == 201
    policy = {
        "name": "pull",
        "topics": {"names": [topic]},
        "consumers": {"spark": ["puller"]},
        "interval_seconds": 1,
    }
    assert api.post("/v1/clusters/demo/policies", json=policy).status_code == 201
    runs = "/v1/clusters/demo/policies/pull/runs"
    wait_until(lambda: api.get(runs).json()["items"], message="a first sweep")
    first = api.get(runs).json()["items"][-1]
    assert first["skip_counts"] == {"offset_query_failed": 2}, "no checkpoint yet: fail closed"

    produce_wave(emulator, topic, 0)
    (
        spark.readStream.format("testkafka")
        .option("bootstrap", emulator.bootstrap)
        .option("topic", topic)
        .load()
        .writeStream.format("parquet")
        .option("path", str(tmp_path / "sink"))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
        .awaitTermination(120)
    )
    wait_until(
        lambda: log_start_offsets(emulator, topic) == {0: 10, 1: 10}, message="deleted what was committed"
    )
    assert spark.read.parquet(str(tmp_path / "sink")).count() == 20
    api.close()
