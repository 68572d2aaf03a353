"""Replication timing of the emulated clusters tests start.

The emulator defaults to Apache Kafka's ``replica.fetch.wait.max.ms`` (500 ms): a follower whose fetch
waits on an idle partition learns a new log start offset (and so lets a DeleteRecords complete) up to
half a second later. Most tests do not need that wait and run with ``SHORT_FETCH_WAIT_MS``; the parts of
the suite that exercise the service's DeleteRecords, confirm and timeout paths
(tests/integration/worker/test_executor.py, tests/integration/worker/test_lagging_leader.py,
tests/integration/kafka/test_delete_records.py) and the
black-box e2e tests (tests/e2e, emulator processes with their defaults) run at ``KAFKA_FETCH_WAIT_MS``.
"""

from typing import Any

SHORT_FETCH_WAIT_MS = 20.0
KAFKA_FETCH_WAIT_MS = 500.0


def enable_delete_records_v3(cluster: Any) -> None:
    """Opt an ``EmulatedCluster`` into the LeaderOnly draft (DeleteRecords v3) on every broker; by default
    it serves v0-2, as Apache Kafka 3.9 does."""
    for broker in cluster.brokers:
        cluster.set_delete_records_max_version(broker, 3)
