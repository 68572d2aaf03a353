"""Faults on the shared real Kafka cluster (``tests/real_kafka``) and the reads their tests judge by:
where a partition's replicas are, a node paused (SIGSTOP: a hung broker that is still registered), the
cluster restored whatever a test did, and a deletion's partition rows as the service's API shows them."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from confluent_kafka import ElectionType, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from helpers import databases
from helpers.kafka_cluster import KafkaCluster
from helpers.service_processes import ROOT, Service, spawn, start_service

# A partition's leadership settling after a broker stopped or came back.
LEADER_MOVING = {
    KafkaError.UNKNOWN_LEADER_EPOCH,
    KafkaError.FENCED_LEADER_EPOCH,
    KafkaError.NOT_LEADER_FOR_PARTITION,  # NOT_LEADER_OR_FOLLOWER in Kafka
    KafkaError.LEADER_NOT_AVAILABLE,
}


@dataclass(frozen=True)
class Placement:
    leader: int
    replicas: list[int]
    isr: list[int]

    def followers(self) -> list[int]:
        """The followers in assignment order: after the leader, KRaft elects the first one in the ISR."""
        return [node for node in self.replicas if node != self.leader]


def placement(cluster: KafkaCluster, topic: str, partition: int = 0) -> Placement:
    """Leader, replicas and ISR of a partition, from a metadata answer."""
    admin = AdminClient({**cluster.client_config(), "log_level": 0})
    state = admin.list_topics(topic, timeout=10).topics[topic].partitions[partition]
    return Placement(state.leader, list(state.replicas), list(state.isrs))


def kafka_offsets(cluster: KafkaCluster, topic: str, partition: int = 0) -> tuple[int, int]:
    """(log start offset, high watermark) as Kafka's Admin API reads them (ListOffsets on the leader)."""
    admin = AdminClient({**cluster.client_config(), "log_level": 0})
    tp = TopicPartition(topic, partition)

    def offset(spec: OffsetSpec) -> tuple[int] | None:
        # Right after a broker came back, its leader epoch may lag the client's metadata for a moment
        # (UNKNOWN_LEADER_EPOCH): asked again, as Kafka's clients do.
        try:
            return (int(admin.list_offsets({tp: spec})[tp].result(timeout=30).offset),)
        except KafkaException as exc:
            if exc.args[0].code() not in LEADER_MOVING and not exc.args[0].retriable():
                raise
            return None

    (earliest,) = eventually(lambda: offset(OffsetSpec.earliest()), what=f"the log start offset of {tp}")
    (latest,) = eventually(lambda: offset(OffsetSpec.latest()), what=f"the high watermark of {tp}")
    return earliest, latest


def log_start_increments(cluster: KafkaCluster, node_id: int, topic: str, partition: int = 0) -> list[str]:
    """Why the node's replica of the partition moved its log start offset, from its ``server.log``:
    ``"<offset> due to client delete records request"`` on a leader that took a DeleteRecords,
    ``"<offset> due to leader offset increment"`` on a follower that learned it from a fetch answer."""
    pattern = re.compile(
        rf"\[UnifiedLog partition={re.escape(f'{topic}-{partition}')}, dir=[^\]]*\] "
        r"Incremented log start offset to (\d+ due to [a-z ]+)"
    )
    text = cluster.node(node_id).log.read_text(errors="replace")
    return [match.group(1).strip() for match in pattern.finditer(text)]


def eventually(check: Callable[[], Any], timeout: float = 60.0, what: str = "") -> Any:
    """``check()``'s first truthy answer, asked every 0.2 s until ``timeout``."""
    deadline = time.monotonic() + timeout
    while not (answer := check()):
        assert time.monotonic() < deadline, f"not reached in {timeout:.0f} s: {what}"
        time.sleep(0.2)
    return answer


@contextmanager
def restored(cluster: KafkaCluster) -> Iterator[None]:
    """Whatever the block did to the nodes, afterwards every node runs and serves, every replica is back
    in sync and each partition is led by its preferred replica again, as before (group coordinators
    included), so the tests that follow meet the cluster as they would have."""
    try:
        yield
    finally:
        for node in cluster.nodes:
            if node.process is not None:
                os.kill(node.process.pid, signal.SIGCONT)
        for node in cluster.nodes:
            cluster.start_node(node.node_id)
        cluster.wait_ready()
        admin = AdminClient({**cluster.client_config(), "log_level": 0})
        eventually(lambda: _all_in_sync(admin), what="every replica back in sync")
        admin.elect_leaders(ElectionType.PREFERRED).result(timeout=60)  # "not needed" answers included


def _all_in_sync(admin: AdminClient) -> bool:
    topics = admin.list_topics(timeout=10).topics.values()
    return all(set(p.isrs) == set(p.replicas) for topic in topics for p in topic.partitions.values())


def pause(cluster: KafkaCluster, node_id: int) -> None:
    """SIGSTOP: the node neither fetches nor answers, but stays registered (unfenced) until the
    controller misses its heartbeats for ``broker.session.timeout.ms`` (9 s by default)."""
    process = cluster.node(node_id).process
    assert process is not None
    os.kill(process.pid, signal.SIGSTOP)


def resume(cluster: KafkaCluster, node_id: int) -> None:
    process = cluster.node(node_id).process
    assert process is not None
    os.kill(process.pid, signal.SIGCONT)


def submit(service: Service, token: str, body: dict[str, Any]) -> str:
    response = httpx.post(
        f"{service.base}/v1/deletions", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=30
    )
    assert response.status_code in (201, 202), response.text
    return str(response.json()["id"])


def partition_row(service: Service, token: str, deletion_id: str) -> dict[str, Any]:
    """The deletion's only partition, as ``GET /v1/deletions/{id}/partitions`` shows it."""
    page = httpx.get(
        f"{service.base}/v1/deletions/{deletion_id}/partitions",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    ).json()
    (row,) = page["items"]
    return dict(row)


@dataclass
class StagedService:
    """An API-only instance and a workers-only instance on one database: a deletion is accepted while
    every broker answers (the unconsumed-records guard lists the groups of every broker), and sent only
    once the executor is resumed, after the test broke a broker."""

    api: Service
    worker: Service

    @contextmanager
    def held(self) -> Iterator[None]:
        """The executor paused (SIGSTOP) for the block: accepted deletions wait, pending."""
        os.kill(self.worker.process.popen.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            self.resume()

    def resume(self) -> None:
        os.kill(self.worker.process.popen.pid, signal.SIGCONT)


def start_staged(env: dict[str, str]) -> StagedService:
    """Both instances start side by side (the API-only one while the worker's start is awaited)."""
    process = spawn([sys.executable, "-m", "app", "serve", "--api-only", "--port", "0"], env, ROOT)
    worker = start_service(env, ROOT, workers_only=True)
    port = process.wait_for(r"serving HTTP on [\d.]+:(\d+)").group(1)
    api = Service(process, f"http://127.0.0.1:{port}")
    eventually(lambda: _healthy(api), timeout=30, what="the API-only instance")
    return StagedService(api, worker)


def _healthy(service: Service) -> bool:
    try:
        return httpx.get(f"{service.base}/healthz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@contextmanager
def service_database() -> Iterator[str]:
    """A PostgreSQL database of its own for a service process, dropped at the end of the session."""
    name = asyncio.run(databases.create("purge_real_kafka"))
    try:
        yield databases.PG_URL.format(name)
    finally:
        asyncio.run(databases.leave(name))
