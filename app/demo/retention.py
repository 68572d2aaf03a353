"""The demo's Spark consumer and retention policy, created through the service's API by ``orders-team``.

The Spark query ``orders-enricher`` reads ``orders.eu`` and has reported a batch ending at
``SPARK_POSITION``; the lagging group ``orders-billing`` read further. The policy deletes from
``orders.eu`` what both have read, so its first sweep (at once) cuts every partition at the Spark
query's position, and a later report moving the query past the group lets the next sweep cut at the
group's position.
"""

from __future__ import annotations

from typing import Any

import httpx

from app.demo.data import DEMO_TOPICS
from app.demo.groups import LAGGING

SPARK_CONSUMER = "orders-enricher"
SPARK_TOPIC = "orders.eu"
SPARK_POSITION = 100
POLICY_NAME = "orders-eu-consumed"
# Short, so a progress report shows its effect within seconds.
POLICY_INTERVAL_SECONDS = 10


def spark_progress(position: int, batch_id: int) -> dict[str, Any]:
    """A progress report of ``orders-enricher``'s query: ``position`` on every partition of its topic."""
    partitions = next(t.partitions for t in DEMO_TOPICS if t.name == SPARK_TOPIC)
    return {
        "query_id": "orders-enricher-query",
        "run_id": "demo-run",
        "batch_id": batch_id,
        "offsets": {SPARK_TOPIC: {str(p): position for p in range(partitions)}},
    }


DEMO_POLICY: dict[str, Any] = {
    "name": POLICY_NAME,
    "topics": {"names": [SPARK_TOPIC]},
    "consumers": {"groups": [LAGGING.name], "spark": [SPARK_CONSUMER]},
    "min_records": 1,
    "interval_seconds": POLICY_INTERVAL_SECONDS,
}


async def create_demo_retention(
    client: httpx.AsyncClient, owner: dict[str, str], cluster: str = "demo"
) -> None:
    """Registers the Spark consumer, reports its first batch and creates the policy, all as ``owner``."""
    consumers = f"/v1/clusters/{cluster}/consumers"
    registered = await client.post(consumers, json={"name": SPARK_CONSUMER, "kind": "spark"}, headers=owner)
    registered.raise_for_status()
    progress = spark_progress(SPARK_POSITION, batch_id=1)
    reported = await client.put(f"{consumers}/{SPARK_CONSUMER}/progress", json=progress, headers=owner)
    reported.raise_for_status()
    created = await client.post(f"/v1/clusters/{cluster}/policies", json=DEMO_POLICY, headers=owner)
    created.raise_for_status()
