"""Each offset spec of the README (*Saying what to delete*) through the service's HTTP API on the real
cluster: what the service resolves is what Kafka's own Admin client reads (ListOffsets latest, by
timestamp; committed offsets), and the low watermarks it reports are Kafka's log start offsets after."""

from __future__ import annotations

import time

from helpers.kafka_cluster import KafkaCluster
from helpers.real_kafka import log_start_offsets, topic_with_records
from helpers.real_kafka_specs import (
    Api,
    Produced,
    by_partition,
    commit,
    create_topic,
    latest_offsets,
    offsets_for_time,
    produce,
)
from helpers.service_processes import Service

RECORDS = 300


def first_at_or_after(produced: list[Produced], partition: int, time_ms: int) -> int:
    return min(p.offset for p in produced if p.partition == partition and p.timestamp >= time_ms)


def test_end_minus_one_and_whole_topic(kafka_cluster: KafkaCluster, purge_service: Service) -> None:
    """``-1`` and ``end`` resolve to the high watermark; an entry without a partition takes every one."""
    topic_with_records(kafka_cluster, "specs-end", 3, 20)
    topic_with_records(kafka_cluster, "specs-whole", 2, 20)
    high_watermarks = latest_offsets(kafka_cluster, "specs-end", 3)
    deletion = Api(purge_service).delete(
        [
            {"topic": "specs-end", "partition": 0, "offset": -1},
            {"topic": "specs-end", "partition": 1, "to": "end"},
            {"topic": "specs-whole", "offset": 7},
        ]
    )
    assert deletion["status"] == "succeeded", deletion
    reported = {
        (p["topic"], p["partition"]): (p["resolved_offset"], p["low_watermark"])
        for p in deletion["partitions"]
    }
    assert reported == {
        ("specs-end", 0): (high_watermarks[0], 20),
        ("specs-end", 1): (high_watermarks[1], 20),
        ("specs-whole", 0): (7, 7),
        ("specs-whole", 1): (7, 7),
    }
    assert log_start_offsets(kafka_cluster, "specs-end", 3) == {0: 20, 1: 20, 2: 0}
    assert log_start_offsets(kafka_cluster, "specs-whole", 2) == {0: 7, 1: 7}


def test_before_cuts_inside_compressed_batches(kafka_cluster: KafkaCluster, purge_service: Service) -> None:
    """CreateTime records a second apart, lz4 on partition 0 and zstd on partition 1, lingered into
    batches of many records: a time between two records of one batch cuts between them."""
    create_topic(kafka_cluster, "specs-created", 2)
    start = (int(time.time()) - 86_400) * 1000
    produced = [
        *produce(
            kafka_cluster,
            "specs-created",
            [(0, start + i * 1000) for i in range(RECORDS)],
            **{"compression.type": "lz4", "linger.ms": 200},
        ),
        *produce(
            kafka_cluster,
            "specs-created",
            [(1, start + i * 1000) for i in range(RECORDS)],
            **{"compression.type": "zstd", "linger.ms": 200},
        ),
    ]
    cut = start + 123_500
    expected = {p: first_at_or_after(produced, p, cut) for p in (0, 1)}
    assert expected == {0: 124, 1: 124}
    assert offsets_for_time(kafka_cluster, "specs-created", 2, cut) == expected
    api = Api(purge_service)
    preview = api.preview([{"topic": "specs-created", "before": cut}])
    assert by_partition(preview["partitions"], "resolved_offset") == expected
    for partition in preview["partitions"]:
        assert partition["cut_time"]["first_record_timestamp_ms"] == start + 124_000
        # The service's principal may not READ (Fetch) the topic: no timestamp check, the preview stands.
        assert partition["cut_time"]["timestamps"] is None
    deletion = api.delete([{"topic": "specs-created", "before": cut}])
    assert deletion["status"] == "succeeded", deletion
    assert by_partition(deletion["partitions"], "low_watermark") == expected
    assert log_start_offsets(kafka_cluster, "specs-created", 2) == expected


def test_before_on_a_log_append_time_topic(kafka_cluster: KafkaCluster, purge_service: Service) -> None:
    """On a LogAppendTime topic the broker's append time counts, not the producer's: three rounds of
    records, each a batch stamped by the broker; a cut at the second round's time keeps it and the third."""
    create_topic(kafka_cluster, "specs-appended", 1, **{"message.timestamp.type": "LogAppendTime"})
    long_ago = (int(time.time()) - 365 * 86_400) * 1000  # what the producer says; the broker overrides it
    produced: list[Produced] = []
    for _ in range(3):
        produced += produce(
            kafka_cluster, "specs-appended", [(0, long_ago)] * 50, **{"compression.type": "lz4"}
        )
    assert min(p.timestamp for p in produced) > long_ago
    cut = min(p.timestamp for p in produced if p.timestamp > produced[0].timestamp)
    expected = first_at_or_after(produced, 0, cut)
    assert expected > 0
    assert offsets_for_time(kafka_cluster, "specs-appended", 1, cut) == {0: expected}
    deletion = Api(purge_service).delete([{"topic": "specs-appended", "partition": 0, "before": cut}])
    assert deletion["status"] == "succeeded", deletion
    assert by_partition(deletion["partitions"], "resolved_offset") == {0: expected}
    assert log_start_offsets(kafka_cluster, "specs-appended", 1) == {0: expected}


def test_committed_by_real_consumer_groups(kafka_cluster: KafkaCluster, purge_service: Service) -> None:
    """The minimum of the groups' offsets committed on the cluster; a group without a commit on a
    partition refuses the request (fail closed), and so does the guard for a group not named that has not
    read up to the cut (409) unless ignored; nothing moves until then."""
    topic_with_records(kafka_cluster, "specs-committed", 2, 50)
    commit(kafka_cluster, "specs-billing", "specs-committed", {0: 30, 1: 45})
    commit(kafka_cluster, "specs-export", "specs-committed", {0: 40, 1: 20})
    commit(kafka_cluster, "specs-partial", "specs-committed", {0: 10})
    api = Api(purge_service)
    refused = api.post([{"topic": "specs-committed", "committed_by": ["specs-billing", "specs-partial"]}])
    assert refused.status_code == 422, refused.text
    assert refused.headers["content-type"] == "application/problem+json"
    assert "specs-partial" in refused.text
    assert log_start_offsets(kafka_cluster, "specs-committed", 2) == {0: 0, 1: 0}
    entries = [{"topic": "specs-committed", "committed_by": ["specs-billing", "specs-export"]}]
    guarded = api.post(entries)
    assert guarded.status_code == 409, guarded.text
    assert guarded.json()["groups"] == [{"group": "specs-partial", "unread_records": 20, "partitions": 1}]
    assert log_start_offsets(kafka_cluster, "specs-committed", 2) == {0: 0, 1: 0}
    deletion = api.delete(entries, ignore_groups=["specs-partial"])
    assert deletion["status"] == "succeeded", deletion
    assert by_partition(deletion["partitions"], "resolved_offset") == {0: 30, 1: 20}
    assert by_partition(deletion["partitions"], "low_watermark") == {0: 30, 1: 20}
    assert log_start_offsets(kafka_cluster, "specs-committed", 2) == {0: 30, 1: 20}
