"""Time-based cuts in the preview: records around the cut are sampled and out-of-order timestamps
reported; the "no record at or after the time" case is explicit."""

from __future__ import annotations

from typing import Any

import httpx
from helpers.offsets import BASE_MS, body, produce_timed


async def test_out_of_order_timestamps_around_the_cut_are_reported(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("events", partitions=2, replication_factor=3)
    skewed = [100, 200, 300, 900, 250, 260, 400]  # one producer clock ahead, then two records behind
    await produce_timed(emulator, "events", 0, [BASE_MS + t for t in skewed])
    await produce_timed(emulator, "events", 1, [BASE_MS + t for t in (100, 200, 300, 400, 500)])
    request = body({"topic": "events", "before": BASE_MS + 350}, dry_run=True)
    response = await app_client.post("/v1/deletions", json=request, headers=alice)
    assert response.status_code == 200, response.text
    parts = {p["partition"]: p for p in response.json()["partitions"]}
    assert parts[0]["resolved_offset"] == 3
    assert parts[0]["cut_time"]["first_record_timestamp_ms"] == BASE_MS + 900
    assert parts[0]["cut_time"]["timestamps"] == {
        "sampled": 7,
        "newer_below_cut": 0,
        "older_at_or_after_cut": 2,
        "out_of_order": True,
    }
    assert parts[1]["resolved_offset"] == 3
    assert parts[1]["cut_time"]["timestamps"]["out_of_order"] is False


async def test_no_record_at_or_after_the_time_cuts_at_the_end(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    emulator.create_topic("events", partitions=1, replication_factor=3)
    await produce_timed(emulator, "events", 0, [BASE_MS + t for t in (100, 200, 300)])
    request = body({"topic": "events", "partition": 0, "before": "2999-01-01T00:00:00+02:00"}, dry_run=True)
    [partition] = (await app_client.post("/v1/deletions", json=request, headers=alice)).json()["partitions"]
    assert partition["resolved_offset"] == 3
    assert partition["records_deleted"] == 3
    assert partition["cut_time"]["record_found"] is False
    assert partition["cut_time"]["first_record_timestamp_ms"] is None
    assert partition["cut_time"]["timestamps"]["out_of_order"] is False


async def test_a_time_before_1970_cuts_before_every_record(
    app_client: httpx.AsyncClient, alice: dict[str, str], emulator: Any
) -> None:
    """A time before the epoch is 0, before every record: as a negative timestamp it would reach
    ListOffsets as one of its special values (-1 is the high watermark) and cut the whole partition."""
    emulator.create_topic("events", partitions=1, replication_factor=3)
    await produce_timed(emulator, "events", 0, [BASE_MS + t for t in (100, 200, 300)])
    for before in ("1969-12-31T23:59:59.999Z", "1900-01-01T00:00:00+01:00"):
        request = body({"topic": "events", "partition": 0, "before": before}, dry_run=True)
        response = await app_client.post("/v1/deletions", json=request, headers=alice)
        assert response.status_code == 200, response.text
        [partition] = response.json()["partitions"]
        assert partition["resolved_offset"] == 0, before
        assert partition["records_deleted"] == 0, before
