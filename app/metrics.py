"""Prometheus metrics of the API (default registry; the executor's own are in ``app.worker.metrics``,
the backlog gauges in ``app.services.backlog``).

``GET /metrics`` serves the whole default registry, so all appear there, every name prefixed
``kafka_purge_``. Counters export no ``_created`` series: a scraper has no use for them and they double
the output.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram, disable_created_metrics

disable_created_metrics()  # type: ignore[no-untyped-call]

NAMESPACE = "kafka_purge"

http_requests_total = Counter(
    "http_requests",
    "HTTP requests answered, by route template and status.",
    ["method", "route", "status"],
    namespace=NAMESPACE,
)
http_request_duration_seconds = Histogram(
    "http_request_duration_seconds",
    "Time to answer an HTTP request.",
    ["method", "route"],
    namespace=NAMESPACE,
)
deletions_accepted_total = Counter(
    "deletions_accepted", "Deletion requests accepted (202), replays excluded.", namespace=NAMESPACE
)
partitions_accepted_total = Counter(
    "partitions_accepted", "Partitions in accepted deletion requests.", namespace=NAMESPACE
)
accept_transactions_total = Counter(
    "accept_transactions",
    "Write transactions that stored accepted deletions (under load one stores several).",
    namespace=NAMESPACE,
)
