"""Erasure evidence after a deletion (a deleted and a failed partition), and the topic offsets view."""

from __future__ import annotations

from typing import Any

import httpx
from helpers.kafka_gateway import leader_of
from helpers.offsets import body, commit, produce, wait_until


async def test_evidence_verdicts_after_success_and_failure(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=2, replication_factor=3)
    await produce(emulator, "orders", {0: 6, 1: 4})
    # Partition 1's leader refuses the deletion for good (as Kafka does for a topic whose cleanup.policy
    # became compact meanwhile); partition 0 is led by another broker.
    first, second = leader_of(emulator, "orders", 0), leader_of(emulator, "orders", 1)
    if first == second:
        second = next(b for b in emulator.brokers if b != first)
        emulator.move_leader("orders", 1, second)
    emulator.inject_fault(second, "DeleteRecords", error="POLICY_VIOLATION")
    request = body(
        {"topic": "orders", "partition": 0, "offset": 5}, {"topic": "orders", "partition": 1, "offset": 3}
    )
    accepted = await app_client.post("/v1/deletions", json=request, headers=alice)
    assert accepted.status_code == 202, accepted.text
    deletion_id = accepted.json()["id"]

    async def finished() -> dict[str, Any] | None:
        got = (await app_client.get(f"/v1/deletions/{deletion_id}", headers=alice)).json()
        return got if got["status"] in ("partially_failed", "succeeded", "failed") else None

    assert (await wait_until(finished))["status"] == "partially_failed"
    response = await app_client.get(f"/v1/deletions/{deletion_id}/evidence", headers=alice)
    assert response.status_code == 200, response.text
    evidence = response.json()
    verdicts = {
        p["partition"]: (p["verdict"], p["log_start_offset"], p["status"]) for p in evidence["partitions"]
    }
    assert verdicts == {0: ("deleted", 5, "succeeded"), 1: ("not_deleted", 0, "failed")}
    assert evidence["verdicts"] == {"deleted": 1, "not_deleted": 1}
    requested = evidence["requested_event"]
    assert requested["action"] == "deletion.requested"
    assert len(requested["hash"]) == 64
    events = (
        await app_client.get("/v1/audit", params={"action": "deletion.requested"}, headers=alice)
    ).json()
    assert requested["event_id"] in [e["id"] for e in events["items"]]
    assert "retention" in evidence["note"]
    other = await app_client.get("/v1/deletions/no-such-id/evidence", headers=alice)
    assert other.status_code == 404


async def test_evidence_is_unknown_when_the_cluster_is_unreachable(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    await produce(emulator, "orders", {0: 3})
    accepted = await app_client.post(
        "/v1/deletions", json=body({"topic": "orders", "partition": 0, "offset": 2}), headers=alice
    )
    deletion_id = accepted.json()["id"]
    await emulator.stop()
    evidence = (await app_client.get(f"/v1/deletions/{deletion_id}/evidence", headers=alice)).json()
    assert [p["verdict"] for p in evidence["partitions"]] == ["unknown"]


async def test_topic_view_shows_placement_offsets_and_group_lag(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic(
        "orders", partitions=2, replication_factor=3, configs={"cleanup.policy": "compact,delete"}
    )
    await produce(emulator, "orders", {0: 10, 1: 4})
    await commit(emulator, "billing", {("orders", 0): 7, ("orders", 1): 4})
    response = await app_client.get("/v1/clusters/demo/topics/orders", headers=alice)
    assert response.status_code == 200, response.text
    view = response.json()
    assert view["cleanup_policy"] == "compact,delete"
    assert view["internal"] is False
    first = view["partitions"][0]
    assert (first["log_start_offset"], first["high_watermark"]) == (0, 10)
    assert first["leader"] in first["replicas"]
    assert len(first["replicas"]) == 3
    assert first["groups"] == [{"group": "billing", "committed_offset": 7, "lag": 3}]
    assert view["groups"] == [
        {"group": "billing", "state": "Empty", "has_active_members": False, "total_lag": 3}
    ]
    assert (await app_client.get("/v1/clusters/demo/topics/missing", headers=alice)).status_code == 404
    assert (await app_client.get("/v1/clusters/nope/topics/orders", headers=alice)).status_code == 404
