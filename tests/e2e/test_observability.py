"""The logs and metrics of a running `kafka-purge serve` process, read the way an operator's tools read
them: its stderr line by line as JSON, and ``GET /metrics`` in the Prometheus text format.

One deletion of three partitions, one of which the broker refuses with POLICY_VIOLATION: the API's line
carries the request id the caller got back, the executor's lines carry the deletion id (and the same
request id), the refused partition is a WARNING naming the Kafka error, and at DEBUG no line contains
the bearer token or the client secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.service_processes import (
    SECRET,
    Database,
    Emulator,
    Service,
    database_url,
    emulator_process,
    produce,
    service_env,
    start_services,
)
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.slow

TOPIC = "observed"
PARTITIONS = 3
REFUSED = "POLICY_VIOLATION"
TERMINAL = {"succeeded", "partially_failed", "failed"}
# prometheus_client's process and runtime collectors keep their conventional names.
STANDARD_PREFIXES = ("process_", "python_")


def leader_of(emulator: Emulator, partition: int) -> int:
    partitions = emulator.state()["topics"][TOPIC]["partitions"]
    return int(next(p["leader"] for p in partitions if p["partition"] == partition))


async def delete_all(service: Service, token: str) -> httpx.Response:
    body = {
        "cluster": "demo",
        "partitions": [{"topic": TOPIC, "partition": p, "offset": 2} for p in range(PARTITIONS)],
        "reason": "observability",
    }
    headers = {"Authorization": f"Bearer {token}", "X-Request-ID": "req-observed-1"}
    async with httpx.AsyncClient(base_url=str(service.base), timeout=30) as client:
        return await client.post("/v1/deletions", json=body, headers=headers)


def parsed(lines: list[str]) -> list[dict[str, Any]]:
    records = []
    for line in lines:
        if line.strip():
            record = json.loads(line)  # every line of the service's output is one JSON object
            assert isinstance(record, dict), line
            records.append(record)
    return records


@pytest.mark.timeout(120)
async def test_json_logs_follow_one_deletion_and_hold_no_secret(tmp_path: Path) -> None:
    with emulator_process(tmp_path, TOPIC, PARTITIONS) as emulator:
        async with database_url("postgresql", tmp_path) as url:
            env = {**service_env(url, emulator.bootstrap), "PURGE_LOG_FORMAT": "json"}
            records = produce(emulator.bootstrap, TOPIC, PARTITIONS, records=3)
            [service] = await start_services([env], tmp_path, records, log_level="DEBUG")
            emulator.fault(leader_of(emulator, 0), "DeleteRecords", error=REFUSED, count=1)
            db = Database(url)
            try:
                token = service.token()
                response = await delete_all(service, token)
                assert response.status_code == 202, response.text
                assert response.headers["x-request-id"] == "req-observed-1"
                deletion_id = response.json()["id"]
                assert await db.wait_status(deletion_id, TERMINAL, timeout_s=60) != "succeeded"
                service.process.wait_for(rf"{REFUSED} on \d partition")
            finally:
                service.process.kill()
                await db.close()
    output = "".join(service.process.lines)
    assert token not in output
    assert token.split(".")[2] not in output  # not even the signature
    assert SECRET not in output
    records = parsed(service.process.lines)
    assert {"time", "level", "logger", "message", "request_id", "principal", "deletion_id", "cluster"} <= set(
        records[0]
    )
    assert any(r["logger"].startswith("uvicorn") for r in records), "uvicorn's lines go through the formatter"
    assert any(r["level"] == "DEBUG" for r in records)
    assert not [r for r in records if "unknown environment variable" in r["message"]]

    [api] = [r for r in records if r["logger"] == "kafka_purge.api" and r["deletion_id"] == deletion_id]
    assert (api["request_id"], api["principal"], api["cluster"], api["level"]) == (
        "req-observed-1",
        "User:alice",
        "demo",
        "INFO",
    )
    executor = [r for r in records if r["logger"] == "kafka_purge.worker" and r["deletion_id"] == deletion_id]
    assert executor, "the executor logs the deletion under its id"
    assert {(r["request_id"], r["cluster"]) for r in executor} == {("req-observed-1", "demo")}
    warnings = [r for r in executor if r["level"] == "WARNING"]
    assert [r["kafka_error"] for r in warnings] == [REFUSED]
    assert warnings[0]["status"] == "failed"
    assert f"{TOPIC}-0" in warnings[0]["message"]


def families(text: str) -> dict[str, Any]:
    return {family.name: family for family in text_string_to_metric_families(text)}


def samples(family: Any) -> list[tuple[str, dict[str, str], float]]:
    return [(s.name, s.labels, s.value) for s in family.samples]


@pytest.mark.timeout(120)
async def test_metrics_names_units_and_labels(tmp_path: Path) -> None:
    with emulator_process(tmp_path, TOPIC, PARTITIONS) as emulator:
        async with database_url("postgresql", tmp_path) as url:
            records = produce(emulator.bootstrap, TOPIC, PARTITIONS, records=3)
            [service] = await start_services([service_env(url, emulator.bootstrap)], tmp_path, records)
            refusing = leader_of(emulator, 0)
            for broker in (1, 2, 3):  # answers held long enough to be seen in flight
                error = REFUSED if broker == refusing else None
                emulator.fault(broker, "DeleteRecords", delay_ms=1500, error=error, count=1)
            db = Database(url)
            try:
                response = await delete_all(service, service.token())
                assert response.status_code == 202, response.text
                async with httpx.AsyncClient(base_url=str(service.base), timeout=30) as client:
                    in_flight = families((await client.get("/metrics")).text)
                    assert await db.wait_status(response.json()["id"], TERMINAL, timeout_s=60)
                    for path in ("/docs", "/openapi.json", "/no/such/path"):
                        await client.get(path)
                    metrics = await client.get("/metrics")
            finally:
                service.process.kill()
                await db.close()
    assert metrics.headers["content-type"].startswith("text/plain")
    found = families(metrics.text)
    for name in found:
        assert name.startswith(("kafka_purge_", *STANDARD_PREFIXES)), name
    assert not [line for line in metrics.text.splitlines() if "_created" in line]

    backlog = samples(in_flight["kafka_purge_backlog_partitions"])
    assert sum(value for _, labels, value in backlog if labels["cluster"] == "demo") == PARTITIONS
    assert {labels["state"] for _, labels, _ in backlog} == {"pending", "in_flight"}
    assert samples(found["kafka_purge_backlog_partitions"]) == [
        ("kafka_purge_backlog_partitions", {"cluster": "demo", "state": s}, 0.0)
        for s in ("pending", "in_flight")
    ]
    assert found["kafka_purge_backlog_oldest_age_seconds"].type == "gauge"
    assert samples(found["kafka_purge_backlog_up"]) == [("kafka_purge_backlog_up", {}, 1.0)]

    outcomes = {
        labels["error"]: value for _, labels, value in samples(found["kafka_purge_partition_outcomes"])
    }
    assert outcomes[REFUSED] >= 1
    assert outcomes["NONE"] >= 1
    assert sum(outcomes.values()) == PARTITIONS
    latency = found["kafka_purge_delete_records_seconds"]
    assert latency.type == "histogram"
    assert {labels["cluster"] for _, labels, _ in samples(latency)} == {"demo"}

    routes = {labels["route"] for _, labels, _ in samples(found["kafka_purge_http_requests"])}
    assert {"/docs", "/openapi.json", "/v1/deletions", "/metrics", "unmatched"} <= routes
    assert found["kafka_purge_http_request_duration_seconds"].type == "histogram"
    for declared in ("kafka_purge_retention_sweeps", "kafka_purge_retention_skipped_partitions"):
        assert found[declared].type == "counter"
