"""Kafka Connect sinks as a policy's consumers (KIP-762), against the emulated cluster and a Connect REST
test server: sink groups commit through the Kafka protocol with a real consumer, Connect's answers come
over HTTP. Runs on both databases.
Kept on a fake because a real worker (tests/real_kafka/test_connect.py) cannot be made on demand to be
older than Connect 2.3, have a FAILED connector, answer slowly, or back a sweep held by the test's own
executor, authorization and partition limit."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
from helpers.connect_rest import ConnectRestServer, sink
from helpers.kafka_records import produce
from helpers.retention import commit, grant, wait_until
from pydantic import SecretStr

from app.settings import ConnectSettings, LimitSettings, Settings
from app.worker import Executor
from app.worker.scheduler import RetentionScheduler

POLICIES = "/v1/clusters/demo/policies"
TOKEN = "connect-token"


@pytest.fixture
def connect_server() -> Iterator[ConnectRestServer]:
    server = ConnectRestServer({}, authorization=f"Bearer {TOKEN}")
    yield server
    server.stop()


@pytest.fixture
def max_partitions() -> int:
    return 10_000


@pytest.fixture
def settings(settings: Settings, connect_server: ConnectRestServer, max_partitions: int) -> Settings:
    pipelines = ConnectSettings(
        url=connect_server.url, kafka_cluster="demo", token=SecretStr(TOKEN), timeout_seconds=2
    )
    limits = LimitSettings(max_partitions=max_partitions)
    return settings.model_copy(update={"connect": {"pipelines": pipelines}, "limits": limits})


def connect_policy(connectors: list[str] | str, name: str = "pipeline", **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "topics": {"read_by_connectors": True},
        "consumers": {"connect": {"cluster": "pipelines", "connectors": connectors}},
        "interval_seconds": 1,
        **fields,
    }


async def create(client: httpx.AsyncClient, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post(POLICIES, json=body, headers=headers)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def latest_run(client: httpx.AsyncClient, headers: dict[str, str], name: str = "pipeline") -> Any:
    response = await client.get(f"{POLICIES}/{name}/runs", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["items"][0]


async def cuts(client: httpx.AsyncClient, headers: dict[str, str], run: dict[str, Any]) -> set[Any]:
    found = set()
    for deletion_id in run["deletion_ids"]:
        deletion = (await client.get(f"/v1/deletions/{deletion_id}", headers=headers)).json()
        found |= {(p["topic"], p["partition"], p["resolved_offset"]) for p in deletion["partitions"]}
    return found


async def test_a_worker_before_connect_2_3_is_read_connector_by_connector(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    inter: str,
    emulator: Any,
    connect_server: ConnectRestServer,
    scheduler: RetentionScheduler,
) -> None:
    override = sink(regex=r"inter\..*", **{"consumer.override.group.id": "lake-writers"})
    connect_server.connectors["lake"] = override
    connect_server.expand = False  # a Connect worker before 2.3: each connector read on its own
    await produce(emulator, inter, {0: 10, 1: 10})
    await produce(emulator, "other", {0: 5})
    await commit(emulator, "lake-writers", {(inter, 0): 2, (inter, 1): 7})
    await commit(emulator, "connect-lake", {(inter, 0): 9, (inter, 1): 9})  # not the sink's group
    await create(client, alice, connect_policy(["lake"]))

    await scheduler.run_once()
    run = await latest_run(client, alice)
    assert (run["status"], run["partitions_matched"]) == ("submitted", 2)
    assert await cuts(client, alice, run) == {(inter, 0, 2), (inter, 1, 7)}
    assert "/connectors/lake/config" in connect_server.requests


async def test_a_failed_connector_holds_its_topics_back(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    inter: str,
    emulator: Any,
    connect_server: ConnectRestServer,
    scheduler: RetentionScheduler,
) -> None:
    held = {**sink("other"), "state": "FAILED", "tasks": ["FAILED"]}
    detail = "connector es-sink is FAILED"
    connect_server.connectors.update({"s3-sink": sink(inter), "es-sink": held})
    await produce(emulator, inter, {0: 4, 1: 4})
    await produce(emulator, "other", {0: 5})
    await commit(emulator, "connect-s3-sink", {(inter, 0): 4, (inter, 1): 4})
    await commit(emulator, "connect-es-sink", {("other", 0): 5})
    await create(client, alice, connect_policy("all_sinks"))

    await scheduler.run_once()
    run = await latest_run(client, alice)
    assert (run["status"], run["skip_counts"]) == ("submitted", {"connector_not_running": 1})
    assert run["skipped"] == [
        {"topic": "other", "partition": 0, "reason": "connector_not_running", "detail": detail}
    ]
    assert await cuts(client, alice, run) == {(inter, 0, 4), (inter, 1, 4)}


async def test_no_sweep_while_the_previous_deletion_runs(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    inter: str,
    emulator: Any,
    connect_server: ConnectRestServer,
    scheduler: RetentionScheduler,
    executor: Executor,
) -> None:
    connect_server.connectors["s3-sink"] = sink(inter)
    await produce(emulator, inter, {0: 10, 1: 10})
    await commit(emulator, "connect-s3-sink", {(inter, 0): 4, (inter, 1): 4})
    await create(client, alice, connect_policy(["s3-sink"]))
    await scheduler.run_once()
    first = await latest_run(client, alice)
    assert first["status"] == "submitted"

    await commit(emulator, "connect-s3-sink", {(inter, 0): 8, (inter, 1): 8})
    await asyncio.sleep(1.1)
    assert await scheduler.run_once() == 1
    waiting = await latest_run(client, alice)
    assert (waiting["status"], waiting["deletion_ids"]) == ("waiting", [])
    assert waiting["warnings"] == [
        f"the previous sweep's deletion(s) {first['deletion_id']} are not finished"
    ]

    async def finished() -> bool:
        await executor.run_once()
        read = await client.get(f"/v1/deletions/{first['deletion_id']}", headers=alice)
        return bool(read.json()["status"] == "succeeded")

    await wait_until(finished)
    await asyncio.sleep(1.1)
    assert await scheduler.run_once() == 1
    third = await latest_run(client, alice)
    assert third["status"] == "submitted"
    assert await cuts(client, alice, third) == {(inter, 0, 8), (inter, 1, 8)}


@pytest.mark.parametrize("max_partitions", [1])
async def test_a_large_sweep_becomes_several_deletions(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    inter: str,
    emulator: Any,
    connect_server: ConnectRestServer,
    scheduler: RetentionScheduler,
) -> None:
    connect_server.connectors["s3-sink"] = sink(f"{inter},other")
    await produce(emulator, inter, {0: 4, 1: 4})
    await produce(emulator, "other", {0: 5})
    await commit(emulator, "connect-s3-sink", {(inter, 0): 1, (inter, 1): 2, ("other", 0): 3})
    body = connect_policy(
        ["s3-sink"],
        consumers={
            "all_groups": True,
            "spark": [],
            "connect": {"cluster": "pipelines", "connectors": ["s3-sink"]},
        },
    )
    await create(client, alice, body)

    await scheduler.run_once()
    run = await latest_run(client, alice)
    assert (run["status"], len(run["deletion_ids"])) == ("submitted", 3)
    assert run["deletion_id"] == run["deletion_ids"][0]
    assert await cuts(client, alice, run) == {(inter, 0, 1), (inter, 1, 2), ("other", 0, 3)}


async def test_the_lease_is_renewed_during_a_slow_sweep(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    inter: str,
    emulator: Any,
    connect_server: ConnectRestServer,
    runtime: Any,
) -> None:
    connect_server.connectors["s3-sink"] = sink(inter)
    await create(client, alice, connect_policy(["s3-sink"]))
    connect_server.delay_seconds = 0.6  # the sweep outlasts its lease twice over
    slow = RetentionScheduler(runtime, instance_id="slow", lease_seconds=0.3)
    other = RetentionScheduler(runtime, instance_id="other", lease_seconds=0.3)
    sweeping = asyncio.create_task(slow.run_once())
    await asyncio.sleep(0.5)
    assert await other.run_once() == 0
    assert await sweeping == 1


async def test_a_connect_policy_needs_describe_on_cluster_and_delete_on_what_sinks_read(
    client: httpx.AsyncClient,
    alice: dict[str, str],
    headers_for: Callable[[str], Awaitable[dict[str, str]]],
    inter: str,
    connect_server: ConnectRestServer,
) -> None:
    connect_server.connectors["s3-sink"] = sink(f"{inter},other")
    bob = await headers_for("bob")
    await grant(client, alice, "User:bob", "DELETE", f"TOPIC:{inter}")
    assert (await client.post(POLICIES, json=connect_policy(["s3-sink"]), headers=bob)).status_code == 403
    await grant(client, alice, "User:bob", "DESCRIBE", "CLUSTER:kafka-cluster")
    assert (await client.post(POLICIES, json=connect_policy(["s3-sink"]), headers=bob)).status_code == 403
    narrowed = connect_policy(["s3-sink"], topics={"read_by_connectors": True, "names": [inter]})
    assert (await client.post(POLICIES, json=narrowed, headers=bob)).status_code == 201
    await grant(client, alice, "User:bob", "DELETE", "TOPIC:other")
    created = await client.post(POLICIES, json=connect_policy(["s3-sink"], name="all"), headers=bob)
    assert created.status_code == 201, created.text
