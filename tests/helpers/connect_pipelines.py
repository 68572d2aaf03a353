"""KIP-762 pipelines on the real cluster: sinks created through a real Connect worker's REST API
(``helpers.connect_worker``), policies created and swept through the service's HTTP API, committed
offsets read with Kafka's Admin API. The connectors a test creates are deleted when it ends, so their
groups are empty (not active) for the tests that follow."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient

from helpers.connect_worker import ConnectWorker, file_sink
from helpers.kafka_cluster import KafkaCluster
from helpers.kafka_faults import eventually
from helpers.real_kafka import CLUSTER, finished
from helpers.service_processes import Service


def committed_offsets(cluster: KafkaCluster, group: str, topic: str, partitions: int) -> dict[int, int]:
    """The group's committed offsets on the topic (-1: none), as Kafka's Admin API reads them."""
    admin = AdminClient(cluster.client_config())
    asked = [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in range(partitions)])]
    answer = admin.list_consumer_group_offsets(asked)[group].result(timeout=30)
    return {tp.partition: tp.offset for tp in answer.topic_partitions}


@dataclass
class Pipelines:
    """One test's sinks on the worker and policies on the service (as the super user alice)."""

    cluster: KafkaCluster
    worker: ConnectWorker
    service: Service
    folder: Path
    token: str = ""
    created: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.token = self.service.token()

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def policies(self) -> str:
        return f"{self.service.base}/v1/clusters/{CLUSTER}/policies"

    def sink(self, name: str, topics: str | None = None, *, file: Path | None = None, **config: str) -> None:
        """A running file sink ``name`` (``regex=`` for ``topics.regex``), created through Connect's API."""
        regex = config.pop("regex", None)
        self.worker.put_connector(
            name, file_sink(file or self.folder / f"{name}.txt", topics, regex=regex, **config)
        )
        self.created.append(name)

    def wait_committed(self, group: str, topic: str, offsets: dict[int, int]) -> None:
        """Until the group (a sink's) has committed exactly ``offsets`` on the topic."""
        eventually(
            lambda: committed_offsets(self.cluster, group, topic, len(offsets)) == offsets,
            what=f"{group} committing {offsets} on {topic}",
        )

    def runs(self, name: str) -> list[dict[str, Any]]:
        response = httpx.get(f"{self.policies}/{name}/runs", headers=self.headers, timeout=30)
        assert response.status_code == 200, response.text
        return list(response.json()["items"])

    def create_policy(
        self, name: str, connectors: list[str], *, cluster: str = "pipelines", **topics: Any
    ) -> dict[str, Any]:
        """A policy over the connectors' topics (intersected with ``topics``); its first sweep, whose
        deletions have finished."""
        body = {
            "name": name,
            "topics": {"read_by_connectors": True, **topics},
            "consumers": {"connect": {"cluster": cluster, "connectors": connectors}},
            "interval_seconds": 3600,
        }
        created = httpx.post(self.policies, json=body, headers=self.headers, timeout=30)
        assert created.status_code == 201, created.text
        return self._next_run(name, 0)

    def sweep(self, name: str) -> dict[str, Any]:
        """Another sweep of the policy now (a change schedules one at once), its deletions finished."""
        before = len(self.runs(name))
        patched = httpx.patch(f"{self.policies}/{name}", json={"min_records": 1}, headers=self.headers)
        assert patched.status_code == 200, patched.text
        return self._next_run(name, before)

    def _next_run(self, name: str, before: int) -> dict[str, Any]:
        def done() -> dict[str, Any] | None:
            runs = self.runs(name)
            return runs[0] if len(runs) > before and runs[0]["finished_at"] else None

        run: dict[str, Any] = eventually(done, what=f"a sweep of policy {name}")
        for deletion_id in run["deletion_ids"]:
            assert finished(self.service, self.token, deletion_id)["status"] == "succeeded", run
        return run

    def cuts(self, run: dict[str, Any]) -> dict[tuple[str, int], int]:
        """(topic, partition) -> the offset the run's deletions deleted below."""
        found = {}
        for deletion_id in run["deletion_ids"]:
            deletion = httpx.get(
                f"{self.service.base}/v1/deletions/{deletion_id}", headers=self.headers
            ).json()
            found |= {(p["topic"], p["partition"]): p["resolved_offset"] for p in deletion["partitions"]}
        return found

    def close(self) -> None:
        for name in self.created:
            self.worker.delete(name)
