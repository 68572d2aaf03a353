"""Accepting with recent topic metadata and configs (``app.adapters.kafka.topics``): what the cluster
changed since it last answered is either seen at once (a refusal is always checked against a fresh
answer) or failed cleanly by the broker at send time. The consumer-group listing is never reused.

The recent answers are allowed to be 5 minutes old here, so nothing depends on how fast the test runs.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from helpers.offsets import body, commit, produce, wait_until

from app.settings import Settings


@pytest.fixture
def settings(settings: Settings) -> Settings:
    clusters = {
        name: cluster.model_copy(update={"metadata_max_age_ms": 300_000})
        for name, cluster in settings.clusters.items()
    }
    return settings.model_copy(update={"clusters": clusters})


def _entry(topic: str, partition: int | None, offset: int) -> dict[str, Any]:
    entry: dict[str, Any] = {"topic": topic, "offset": offset}
    if partition is not None:
        entry["partition"] = partition
    return entry


async def _post(
    client: httpx.AsyncClient, headers: dict[str, str], topic: str, partition: int | None, offset: int
) -> httpx.Response:
    return await client.post("/v1/deletions", json=body(_entry(topic, partition, offset)), headers=headers)


async def _final_partitions(
    client: httpx.AsyncClient, headers: dict[str, str], deletion_id: str
) -> list[dict[str, Any]]:
    async def finished() -> list[dict[str, Any]] | None:
        read = (await client.get(f"/v1/deletions/{deletion_id}", headers=headers)).json()
        return None if read["status"] in {"pending", "in_progress"} else read["partitions"]

    partitions: list[dict[str, Any]] = await wait_until(finished)
    return partitions


async def test_a_topic_created_after_a_refusal_is_accepted_at_once(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    assert (await _post(app_client, alice, "orders", 0, 0)).status_code == 202
    refused = await _post(app_client, alice, "later", 0, 0)
    assert refused.status_code == 404, refused.text
    emulator.create_topic("later", partitions=1, replication_factor=3)
    accepted = await _post(app_client, alice, "later", 0, 0)
    assert accepted.status_code == 202, accepted.text


async def test_partitions_added_are_accepted_at_once(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    assert (await _post(app_client, alice, "orders", 0, 0)).status_code == 202
    # The emulator cannot add partitions to a topic; a topic created again with more has the same effect.
    emulator.model.delete_topic("orders")
    emulator.create_topic("orders", partitions=3, replication_factor=3)
    named = await _post(app_client, alice, "orders", 2, 0)
    assert named.status_code == 202, named.text
    emulator.model.delete_topic("orders")
    emulator.create_topic("orders", partitions=4, replication_factor=3)
    whole = await _post(app_client, alice, "orders", None, 0)
    assert whole.status_code == 202, whole.text
    assert [p["partition"] for p in whole.json()["partitions"]] == [0, 1, 2, 3]


async def test_a_topic_deleted_since_it_was_seen_fails_cleanly(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    await produce(emulator, "orders", {0: 5})
    assert (await _post(app_client, alice, "orders", 0, 1)).status_code == 202
    emulator.model.delete_topic("orders")
    accepted = await _post(app_client, alice, "orders", 0, 2)
    assert accepted.status_code == 202, accepted.text
    [partition] = await _final_partitions(app_client, alice, accepted.json()["id"])
    assert (partition["status"], partition["error_code"]) == ("failed", "UNKNOWN_TOPIC_OR_PARTITION")


async def test_a_policy_changed_to_compact_fails_at_the_broker(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    assert (await _post(app_client, alice, "orders", 0, 0)).status_code == 202
    emulator.model.delete_topic("orders")
    emulator.create_topic("orders", partitions=1, replication_factor=3, configs={"cleanup.policy": "compact"})
    accepted = await _post(app_client, alice, "orders", 0, 0)
    assert accepted.status_code == 202, accepted.text
    [partition] = await _final_partitions(app_client, alice, accepted.json()["id"])
    assert (partition["status"], partition["error_code"]) == ("failed", "POLICY_VIOLATION")


async def test_a_policy_changed_to_delete_is_accepted_at_once(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3, configs={"cleanup.policy": "compact"})
    refused = await _post(app_client, alice, "orders", 0, 0)
    assert refused.status_code == 422, refused.text
    emulator.model.delete_topic("orders")
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    accepted = await _post(app_client, alice, "orders", 0, 0)
    assert accepted.status_code == 202, accepted.text


async def test_a_group_committed_after_a_request_guards_the_next_one(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    await produce(emulator, "orders", {0: 10})
    assert (await _post(app_client, alice, "orders", 0, 2)).status_code == 202
    await commit(emulator, "billing", {("orders", 0): 4})
    refused = await _post(app_client, alice, "orders", 0, 6)
    assert refused.status_code == 409, refused.text
    assert refused.json()["groups"] == [{"group": "billing", "unread_records": 2, "partitions": 1}]
