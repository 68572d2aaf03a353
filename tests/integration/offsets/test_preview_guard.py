"""Preview (dry_run) figures, the unconsumed-records guard, and topics refused at accept time."""

from __future__ import annotations

import hashlib
from typing import Any

import httpx
from aiokafka import AIOKafkaConsumer
from helpers.offsets import body, commit, produce, wait_until

from app.audit import canonical_json


async def _audit(client: httpx.AsyncClient, headers: dict[str, str], action: str) -> list[dict[str, Any]]:
    response = await client.get("/v1/audit", params={"action": action}, headers=headers)
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


async def test_preview_reports_exact_lag_and_stores_nothing(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=2, replication_factor=3)
    await produce(emulator, "orders", {0: 10, 1: 20})
    await commit(emulator, "billing", {("orders", 0): 3, ("orders", 1): 20})
    await commit(emulator, "audit", {("orders", 0): 8})
    await commit(emulator, "done", {("orders", 0): 10, ("orders", 1): 15})
    request = body({"topic": "orders", "offset": 9}, dry_run=True)
    response = await app_client.post("/v1/deletions", json=request, headers=alice)
    assert response.status_code == 200, response.text
    preview = response.json()
    parts = {p["partition"]: p for p in preview["partitions"]}
    assert parts[0]["records_deleted"] == 9
    assert parts[0]["predicted_outcome"] == "NONE"
    # No transaction open: the last stable offset is the high watermark, no uncommitted record goes.
    assert [(p["last_stable_offset"], p["uncommitted_records"]) for p in parts.values()] == [(10, 0), (20, 0)]
    assert {
        (g["group"], g["committed_offset"], g["unread_records"]) for g in parts[0]["unconsumed_groups"]
    } == {
        ("billing", 3, 6),
        ("audit", 8, 1),
    }
    assert parts[1]["unconsumed_groups"] == []
    assert {(g["group"], g["state"], g["has_active_members"]) for g in preview["unconsumed_groups"]} == {
        ("billing", "Empty", False),
        ("audit", "Empty", False),
    }
    assert {g["group"]: g["unread_records"] for g in preview["unconsumed_groups"]} == {
        "audit": 1,
        "billing": 6,
    }
    assert preview["would_be_refused"] is True
    assert (await app_client.get("/v1/deletions", headers=alice)).json()["items"] == []
    [event] = await _audit(app_client, alice, "deletion.previewed")
    assert event["details"]["preview_hash"] == preview["preview_hash"]
    content = {k: v for k, v in preview.items() if k not in ("audit_event_id", "preview_hash")}
    assert hashlib.sha256(canonical_json(content).encode()).hexdigest() == preview["preview_hash"]
    assert event["id"] == preview["audit_event_id"]


async def test_preview_predicts_kafka_outcomes(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic(
        "compacted", partitions=1, replication_factor=3, configs={"cleanup.policy": "compact"}
    )
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    await produce(emulator, "orders", {0: 5})
    request = body(
        {"topic": "compacted", "partition": 0, "offset": 0},
        {"topic": "orders", "partition": 0, "offset": 6},
        dry_run=True,
    )
    preview = (await app_client.post("/v1/deletions", json=request, headers=alice)).json()
    assert [p["predicted_outcome"] for p in preview["partitions"]] == [
        "POLICY_VIOLATION",
        "OFFSET_OUT_OF_RANGE",
    ]
    assert preview["records_deleted"] == 0


async def test_leader_only_on_a_v2_broker_is_predicted_unsupported(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=3, replication_factor=3)
    await produce(emulator, "orders", {0: 2, 1: 2, 2: 2})
    for broker in (1, 2, 3):
        emulator.set_delete_records_max_version(broker, 2)
    await emulator.drop_connections()  # versions are negotiated per connection (the service connected)
    request = body({"topic": "orders", "offset": 1}, dry_run=True, leader_only=True)
    preview = (await app_client.post("/v1/deletions", json=request, headers=alice)).json()
    assert {p["predicted_outcome"] for p in preview["partitions"]} == {"UNSUPPORTED_VERSION"}


async def test_guard_refuses_unless_allowed_or_ignored(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=1, replication_factor=3)
    await produce(emulator, "orders", {0: 10})
    await commit(emulator, "billing", {("orders", 0): 4})
    request = body({"topic": "orders", "partition": 0, "offset": 6})
    refused = await app_client.post("/v1/deletions", json=request, headers=alice)
    assert refused.status_code == 409, refused.text
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["groups"] == [{"group": "billing", "unread_records": 2, "partitions": 1}]
    assert (await app_client.get("/v1/deletions", headers=alice)).json()["items"] == []
    ignored = await app_client.post(
        "/v1/deletions", json={**request, "ignore_groups": ["billing"]}, headers=alice
    )
    assert ignored.status_code == 202, ignored.text
    # The accepting instance sends at once; let that deletion finish so the log start offset (6) is
    # settled before the next guard counts what "billing" has not read.
    location = ignored.headers["Location"]

    async def finished() -> bool:
        status = (await app_client.get(location, headers=alice)).json()["status"]
        return status not in ("pending", "in_progress")

    assert await wait_until(finished)
    allowed = await app_client.post(
        "/v1/deletions",
        json=body({"topic": "orders", "partition": 0, "offset": 8}, allow_unconsumed=True),
        headers=alice,
    )
    assert allowed.status_code == 202, allowed.text
    events = await _audit(app_client, alice, "deletion.requested")
    newest = max(events, key=lambda e: e["id"])
    assert newest["details"]["allow_unconsumed"] is True
    # Records 6 and 7: those before the new log start offset are gone already.
    assert newest["details"]["unconsumed_groups"] == [
        {"group": "billing", "unread_records": 2, "partitions": 1}
    ]


async def test_guard_counts_the_partitions_behind_the_cut_from_their_log_start(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("orders", partitions=3, replication_factor=3)
    await produce(emulator, "orders", {0: 10, 1: 10, 2: 10})
    await commit(emulator, "billing", {("orders", 0): 2, ("orders", 1): 8})
    first = body({"topic": "orders", "partition": 0, "offset": 4}, allow_unconsumed=True)
    accepted = await app_client.post("/v1/deletions", json=first, headers=alice)
    assert accepted.status_code == 202, accepted.text

    async def deleted() -> bool:
        read = await app_client.get(f"/v1/deletions/{accepted.json()['id']}", headers=alice)
        return bool(read.json()["status"] == "succeeded")

    await wait_until(deleted)
    # Partition 0: billing at 2, log start 4, cut 6: 2 unread. Partition 1: billing read past the cut.
    # Partition 2: billing never committed there.
    request = body(*({"topic": "orders", "partition": p, "offset": 6} for p in range(3)))
    refused = await app_client.post("/v1/deletions", json=request, headers=alice)
    assert refused.status_code == 409, refused.text
    assert refused.json()["groups"] == [{"group": "billing", "unread_records": 2, "partitions": 1}]


async def test_compact_and_internal_topics_are_refused_at_accept(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic(
        "compacted", partitions=1, replication_factor=3, configs={"cleanup.policy": "compact"}
    )
    emulator.create_topic(
        "both", partitions=1, replication_factor=3, configs={"cleanup.policy": "compact,delete"}
    )
    await produce(emulator, "both", {0: 3})
    for topic in ("compacted", "__consumer_offsets"):
        response = await app_client.post(
            "/v1/deletions", json=body({"topic": topic, "partition": 0, "offset": 0}), headers=alice
        )
        assert response.status_code == 422, response.text
        assert topic in response.json()["errors"][0]["detail"]
    accepted = await app_client.post(
        "/v1/deletions", json=body({"topic": "both", "partition": 0, "offset": 2}), headers=alice
    )
    assert accepted.status_code == 202, accepted.text


async def test_latest_reset_consumer_below_the_cut_is_reported(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("clicks", partitions=1, replication_factor=3)
    await produce(emulator, "clicks", {0: 10})
    await commit(emulator, "dashboard", {("clicks", 0): 2})
    consumer = AIOKafkaConsumer(
        "clicks",
        bootstrap_servers=emulator.bootstrap,
        group_id="dashboard",
        auto_offset_reset="latest",
        enable_auto_commit=False,
        max_poll_records=1,
    )
    await consumer.start()
    try:

        async def positioned() -> bool:
            await consumer.getmany(timeout_ms=100, max_records=1)
            return bool(consumer.assignment())

        await wait_until(positioned)
        request = body({"topic": "clicks", "partition": 0, "to": "end"}, dry_run=True)
        preview = (await app_client.post("/v1/deletions", json=request, headers=alice)).json()
        [group] = preview["partitions"][0]["unconsumed_groups"]
        assert (group["group"], group["committed_offset"], group["unread_records"]) == ("dashboard", 2, 8)
        [summary] = preview["unconsumed_groups"]
        assert summary["state"] == "Stable"
        assert summary["has_active_members"] is True
    finally:
        await consumer.stop()
