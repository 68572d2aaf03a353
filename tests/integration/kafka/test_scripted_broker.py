"""Broker answers the emulator never gives: a partition left out of the response, an unknown error
code, and a broker that never answers (client-side deadline above the broker's TimeoutMs)."""

from __future__ import annotations

import time
from typing import Any

from helpers.kafka_gateway import delete_records
from helpers.scripted_broker import ScriptedBroker

from app.adapters.kafka import KafkaClusters
from app.domain.ports import TopicPartition
from app.settings import ClusterSettings

TP = TopicPartition


def _partition(index: int, low_watermark: int, leader_lso: int, code: int) -> dict[str, int]:
    return {
        "PartitionIndex": index,
        "LowWatermark": low_watermark,
        "LeaderLogStartOffset": leader_lso,
        "ErrorCode": code,
    }


def _skip_partition_two(body: dict[str, Any]) -> dict[str, Any]:
    """p0 succeeds, p1 carries an error code Kafka does not define, p2 is left out, p99 was not asked."""
    partitions = [_partition(0, 7, 9, 0), _partition(1, -1, -1, 12345), _partition(99, -1, -1, 0)]
    return {"ThrottleTimeMs": 0, "Topics": [{"Name": body["Topics"][0]["Name"], "Partitions": partitions}]}


async def test_partition_missing_from_the_response_fails_alone() -> None:
    async with ScriptedBroker("t", 3, _skip_partition_two) as broker:
        gateway = KafkaClusters(
            {"c": ClusterSettings(bootstrap_servers=broker.bootstrap, request_timeout_ms=2_000)}
        )
        try:
            outcomes = await delete_records(
                gateway,
                "c",
                {TP("t", 0): 9, TP("t", 1): 9, TP("t", 2): 9},
                leader_only=True,
                timeout_ms=1_000,
            )
        finally:
            await gateway.close()

    assert len(broker.delete_requests) == 1
    sent = broker.delete_requests[0]
    assert sent["LeaderOnly"] is True
    assert sent["TimeoutMs"] == 1_000
    assert [p["PartitionIndex"] for p in sent["Topics"][0]["Partitions"]] == [0, 1, 2]
    assert set(outcomes) == {TP("t", 0), TP("t", 1), TP("t", 2)}
    ok = outcomes[TP("t", 0)]
    assert (ok.error, ok.low_watermark, ok.leader_log_start_offset) == ("NONE", 7, 9)
    unknown = outcomes[TP("t", 1)]
    assert unknown.error == "UNKNOWN_SERVER_ERROR"
    assert "broker error code 12345" in (unknown.message or "")
    missing = outcomes[TP("t", 2)]
    assert missing.error == "UNKNOWN_SERVER_ERROR"
    assert "did not contain a result for partition t-2" in (missing.message or "")


def _silent_once(body: dict[str, Any]) -> dict[str, Any] | None:
    if body["TimeoutMs"] == 300:
        return None
    partitions = [_partition(0, 1, 1, 0)]
    return {"ThrottleTimeMs": 0, "Topics": [{"Name": "t", "Partitions": partitions}]}


async def test_silent_broker_times_out_on_the_client_after_the_broker_timeout() -> None:
    async with ScriptedBroker("t", 1, _silent_once) as broker:
        settings = ClusterSettings(bootstrap_servers=broker.bootstrap, request_timeout_ms=1_000)
        gateway = KafkaClusters({"c": settings})
        try:
            started = time.monotonic()
            outcomes = await delete_records(gateway, "c", {TP("t", 0): 1}, leader_only=False, timeout_ms=300)
            waited = time.monotonic() - started
            # The silent connection was dropped, so the next request is not stuck behind the lost answer.
            again = await delete_records(gateway, "c", {TP("t", 0): 1}, leader_only=False, timeout_ms=400)
        finally:
            await gateway.close()

    outcome = outcomes[TP("t", 0)]
    assert outcome.error == "REQUEST_TIMED_OUT"
    assert "did not answer within 1300 ms" in (outcome.message or "")
    assert waited >= 1.3
    assert again[TP("t", 0)].error == "NONE"
