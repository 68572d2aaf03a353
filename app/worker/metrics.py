"""Prometheus metrics of the executor and the retention scheduler (default registry, served by
``GET /metrics``; the backlog gauges are read from the database at scrape time: ``app.services.backlog``)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from app.metrics import NAMESPACE

CLAIMED = Counter("claimed_partitions", "Partition rows claimed by this instance.", namespace=NAMESPACE)
OUTCOMES = Counter(
    "partition_updates",
    "Partition state changes written by the executor (after the fence), by the state written.",
    ["status"],
    namespace=NAMESPACE,
)
BROKER_ANSWERS = Counter(
    "partition_outcomes",
    "Partition outcomes the executor acted on, by cluster and Kafka error name (NONE: deleted; also the "
    "client-side NETWORK_EXCEPTION when a leader could not be reached, and partitions withheld because "
    "their requester lost DELETE: AUTHORIZATION_REVOKED).",
    ["cluster", "error"],
    namespace=NAMESPACE,
)
STALE_WRITES = Counter(
    "stale_writes",
    "Writes refused by the fence: the lease had passed to another claim.",
    namespace=NAMESPACE,
)
LOST_LEASES = Counter("lost_leases", "Leases found taken over while renewing them.", namespace=NAMESPACE)
SEND_SECONDS = Histogram(
    "delete_records_seconds",
    "Time of one executor DeleteRecords call to a cluster (all leaders of a group, in parallel).",
    ["cluster"],
    namespace=NAMESPACE,
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
SWEEPS = Counter(
    "retention_sweeps",
    "Retention policy sweeps run, by cluster and result (submitted, nothing_to_delete, denied, failed).",
    ["cluster", "status"],
    namespace=NAMESPACE,
)
SWEEP_SKIPS = Counter(
    "retention_skipped_partitions",
    "Partitions a retention sweep left alone, by cluster and reason.",
    ["cluster", "reason"],
    namespace=NAMESPACE,
)
WEBHOOK_ATTEMPTS = Counter(
    "webhook_attempts",
    "Webhook delivery attempts, by result: delivered (2xx), failed (retried later), dead (the last attempt "
    "failed: dead-lettered).",
    ["result"],
    namespace=NAMESPACE,
)
