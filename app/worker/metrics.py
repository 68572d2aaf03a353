"""Prometheus metrics of the executor (default registry, served by ``GET /metrics``)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

CLAIMED = Counter("purge_executor_claimed_partitions_total", "Partition rows claimed by this instance.")
OUTCOMES = Counter(
    "purge_executor_partition_updates_total", "Partition state changes written by the executor.", ["status"]
)
STALE_WRITES = Counter(
    "purge_executor_stale_writes_total", "Writes refused by the fence: the lease had passed to another claim."
)
LOST_LEASES = Counter("purge_executor_lost_leases_total", "Leases found taken over while renewing them.")
SEND_SECONDS = Histogram(
    "purge_executor_delete_records_seconds",
    "Time of one gateway DeleteRecords call (all leaders of a group).",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
