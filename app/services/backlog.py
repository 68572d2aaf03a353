"""Backlog gauges, read from the database when ``/metrics`` is scraped.

Read at scrape time rather than kept by the executor: the database is the one place that sees every
instance's partitions (an executor knows only its own claims, and an API-only process none), and a
scrape every few seconds costs one grouped query over the active deletions. The query has a deadline:
when the database is slow the gauges keep their previous values and ``kafka_purge_backlog_up`` says 0.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

from prometheus_client import Gauge
from sqlalchemy.exc import SQLAlchemyError

from app.adapters.db.repositories.backlog import backlog
from app.adapters.db.session import read_session
from app.metrics import NAMESPACE
from app.services.runtime import Runtime

log = logging.getLogger("kafka_purge.metrics")

QUERY_TIMEOUT_S = 2.0
STATES = ("pending", "in_flight")

PARTITIONS = Gauge(
    "backlog_partitions",
    "Unfinished partitions of active deletions, by cluster and state: in_flight (an executor holds the "
    "lease: being sent or written back) or pending (waiting for a claim or a retry).",
    ["cluster", "state"],
    namespace=NAMESPACE,
)
OLDEST_AGE = Gauge(
    "backlog_oldest_age_seconds",
    "Age of the oldest unfinished partition (since its deletion was accepted), by cluster and state; "
    "0 when there is none.",
    ["cluster", "state"],
    namespace=NAMESPACE,
)
UP = Gauge(
    "backlog_up", "1 when the last scrape read the backlog from the database, else 0.", namespace=NAMESPACE
)


async def refresh_backlog(runtime: Runtime) -> None:
    """Sets the gauges for every configured cluster (zero when idle) from one query."""
    now = datetime.now(UTC)
    try:
        async with asyncio.timeout(QUERY_TIMEOUT_S), read_session(runtime.sessionmaker) as session:
            rows = await backlog(session, now)
    except (TimeoutError, SQLAlchemyError, OSError) as exc:
        UP.set(0)
        log.warning("reading the backlog for /metrics failed: %s", type(exc).__name__)
        return
    counts: dict[tuple[str, str], int] = {}
    ages: dict[tuple[str, str], float] = {}
    for cluster in runtime.settings.clusters:
        for state in STATES:
            counts[cluster, state], ages[cluster, state] = 0, 0.0
    for row in rows:
        key = (row.cluster, "in_flight" if row.in_flight else "pending")
        counts[key] = counts.get(key, 0) + row.partitions
        ages[key] = max(ages.get(key, 0.0), (now - row.oldest_created_at).total_seconds())
    for (cluster, state), count in counts.items():
        PARTITIONS.labels(cluster, state).set(count)
        OLDEST_AGE.labels(cluster, state).set(ages[cluster, state])
    UP.set(1)
