"""Sweeps against the emulated cluster: deletes exactly what every consumer consumed, fails closed, lets one
instance sweep a policy at a time, reads Spark checkpoints."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
from helpers.kafka_records import produce
from helpers.retention import commit, policy_body, progress_body, wait_until
from prometheus_client import REGISTRY

from app.domain.ports import TopicPartition
from app.services.runtime import Runtime
from app.worker import Executor
from app.worker.scheduler import RetentionScheduler

POLICIES = "/v1/clusters/demo/policies"
P0, P1 = TopicPartition("inter.a", 0), TopicPartition("inter.a", 1)


async def runs(
    client: httpx.AsyncClient, headers: dict[str, str], name: str = "inter"
) -> list[dict[str, Any]]:
    response = await client.get(f"{POLICIES}/{name}/runs", headers=headers)
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


async def report(
    client: httpx.AsyncClient, headers: dict[str, str], batch: int, offsets: dict[str, int]
) -> None:
    body = progress_body(batch, {"inter.a": offsets})
    response = await client.put("/v1/clusters/demo/consumers/enricher/progress", json=body, headers=headers)
    assert response.status_code == 200, response.text


async def finish(
    client: httpx.AsyncClient, headers: dict[str, str], executor: Executor, deletion_id: str
) -> None:
    async def done() -> bool:
        await executor.run_once()
        read = await client.get(f"/v1/deletions/{deletion_id}", headers=headers)
        return bool(read.json()["status"] == "succeeded")

    await wait_until(done)


async def test_sweep_deletes_the_minimum_over_groups_and_spark(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    inter: str,
    emulator: Any,
    runtime: Runtime,
    scheduler: RetentionScheduler,
    executor: Executor,
) -> None:
    await produce(emulator, inter, {0: 10, 1: 10})
    await commit(emulator, "billing", {(inter, 0): 6, (inter, 1): 4})
    await report(client, alice, 1, {"0": 8, "1": 2})
    assert (await client.post(POLICIES, json=policy_body(), headers=alice)).status_code == 201

    assert await scheduler.run_once() == 1
    [run] = await runs(client, alice)
    assert (run["status"], run["partitions_matched"], run["partitions_planned"]) == ("submitted", 2, 2)
    deletion = (await client.get(f"/v1/deletions/{run['deletion_id']}", headers=alice)).json()
    assert (deletion["reason"], deletion["principal"]) == ("policy inter", "User:alice")
    assert {(p["partition"], p["resolved_offset"]) for p in deletion["partitions"]} == {(0, 6), (1, 2)}
    await finish(client, alice, executor, run["deletion_id"])
    assert await runtime.gateway.log_start_offsets("demo", [P0, P1]) == {P0: 6, P1: 2}

    # Not due again before interval_seconds; a forced sweep finds nothing new to delete.
    assert await scheduler.run_once() == 0
    policy = (await client.get(f"{POLICIES}/inter", headers=alice)).json()
    assert policy["last_run_at"] is not None
    await asyncio.sleep(1.1)
    assert await scheduler.run_once() == 1
    latest = (await runs(client, alice))[0]
    assert latest["status"] == "nothing_to_delete"
    assert latest["skip_counts"] == {"nothing_to_delete": 2}
    audit = (await client.get("/v1/audit", params={"action": "policy.swept"}, headers=alice)).json()["items"]
    assert [e["details"]["status"] for e in audit] == ["submitted"]


def _sweep_samples() -> tuple[float, float]:
    """The metrics of a run that found nothing to delete and partitions without a position."""
    sweeps = REGISTRY.get_sample_value(
        "kafka_purge_retention_sweeps_total", {"cluster": "demo", "status": "nothing_to_delete"}
    )
    skips = REGISTRY.get_sample_value(
        "kafka_purge_retention_skipped_partitions_total",
        {"cluster": "demo", "reason": "consumer_without_position"},
    )
    return sweeps or 0.0, skips or 0.0


async def test_sweep_fails_closed_without_positions(
    client: httpx.AsyncClient, alice: dict[str, str], inter: str, emulator: Any, scheduler: RetentionScheduler
) -> None:
    await produce(emulator, inter, {0: 5, 1: 5})
    await commit(emulator, "billing", {(inter, 0): 5})
    assert (await client.post(POLICIES, json=policy_body(), headers=alice)).status_code == 201
    sweeps, skips = _sweep_samples()
    await scheduler.run_once()
    [run] = await runs(client, alice)
    assert (run["status"], run["deletion_id"], run["partitions_planned"]) == ("nothing_to_delete", None, 0)
    assert run["skip_counts"] == {"consumer_without_position": 2}
    after = _sweep_samples()
    assert (after[0] - sweeps, after[1] - skips) == (1, 2)
    assert {s["partition"]: s["detail"] for s in run["skipped"]} == {
        0: "spark:enricher has no position on inter.a-0",
        1: "group:billing has no position on inter.a-1",
    }
    assert "Spark consumer 'enricher' is not registered on 'demo'" in run["warnings"]


async def test_all_groups_never_counts_spark_source_groups(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    inter: str,
    emulator: Any,
    scheduler: RetentionScheduler,
) -> None:
    await produce(emulator, inter, {0: 10, 1: 10})
    await commit(emulator, "a", {(inter, 0): 7, (inter, 1): 3})
    await commit(emulator, "spark-kafka-source-5f2c-driver-0", {(inter, 0): 1, (inter, 1): 1})
    body = policy_body(consumers="all_groups", min_records=4)
    assert (await client.post(POLICIES, json=body, headers=alice)).status_code == 201
    await scheduler.run_once()
    [run] = await runs(client, alice)
    assert run["status"] == "submitted"
    assert run["skip_counts"] == {"below_min_records": 1}
    deletion = (await client.get(f"/v1/deletions/{run['deletion_id']}", headers=alice)).json()
    assert [(p["partition"], p["resolved_offset"]) for p in deletion["partitions"]] == [(0, 7)]


async def test_min_age_keeps_young_records(
    client: httpx.AsyncClient, alice: dict[str, str], inter: str, emulator: Any, scheduler: RetentionScheduler
) -> None:
    await produce(emulator, inter, {0: 4})
    await commit(emulator, "billing", {(inter, 0): 4})
    body = policy_body(topics={"names": [inter]}, consumers={"groups": ["billing"]}, min_age_seconds=3600)
    assert (await client.post(POLICIES, json=body, headers=alice)).status_code == 201
    await scheduler.run_once()
    [run] = await runs(client, alice)
    assert run["skip_counts"] == {"records_too_young": 1, "consumer_without_position": 1}


async def test_one_instance_sweeps_a_policy_at_a_time(
    client: httpx.AsyncClient, alice: dict[str, str], inter: str, emulator: Any, runtime: Runtime
) -> None:
    await produce(emulator, inter, {0: 3})
    await commit(emulator, "billing", {(inter, 0): 3, (inter, 1): 0})
    body = policy_body(consumers={"groups": ["billing"]})
    assert (await client.post(POLICIES, json=body, headers=alice)).status_code == 201
    schedulers = [RetentionScheduler(runtime, instance_id=f"instance-{i}") for i in range(4)]
    swept = await asyncio.gather(*(s.run_once() for s in schedulers))
    assert sorted(swept) == [0, 0, 0, 1]
    assert len(await runs(client, alice)) == 1


async def test_spark_positions_come_from_the_checkpoint(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    inter: str,
    emulator: Any,
    scheduler: RetentionScheduler,
    checkpoint_root: Path,
) -> None:
    checkpoint = checkpoint_root / "ckpt"
    for folder in ("offsets", "commits"):
        (checkpoint / folder).mkdir(parents=True)
    (checkpoint / "offsets" / "0").write_text('v1\n{}\n{"inter.a": {"0": 4, "1": 2}}', encoding="utf-8")
    (checkpoint / "commits" / "0").write_text("v1\n{}", encoding="utf-8")
    (checkpoint / "offsets" / "1").write_text('v1\n{}\n{"inter.a": {"0": 9, "1": 9}}', encoding="utf-8")
    await produce(emulator, inter, {0: 10, 1: 10})
    consumer = {"name": "enricher", "kind": "spark", "checkpoint_location": str(checkpoint)}
    assert (await client.post("/v1/clusters/demo/consumers", json=consumer, headers=alice)).status_code == 201
    body = policy_body(consumers={"spark": ["enricher"]})
    assert (await client.post(POLICIES, json=body, headers=alice)).status_code == 201
    await scheduler.run_once()
    [run] = await runs(client, alice)
    deletion = (await client.get(f"/v1/deletions/{run['deletion_id']}", headers=alice)).json()
    assert {(p["partition"], p["resolved_offset"]) for p in deletion["partitions"]} == {(0, 4), (1, 2)}

    # An unreadable checkpoint is a failed offset query: nothing is deleted.
    (checkpoint / "offsets" / "0").write_text("v7\n{}", encoding="utf-8")
    await asyncio.sleep(1.1)
    await scheduler.run_once()
    latest = (await runs(client, alice))[0]
    assert (latest["status"], latest["skip_counts"]) == ("nothing_to_delete", {"offset_query_failed": 2})
