"""ClusterState: brokers, topics and partitions, plus the fault controls the glue exposes."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state.partition import Partition
from kafka_emulator.state.purgatory import DeletePurgatory
from kafka_emulator.state.replication import Replicator
from kafka_emulator.state.snapshot import snapshot_state
from kafka_emulator.state.topics import (
    Topic,
    TopicError,
    assign_replicas,
    new_topic_id,
    validate_configs,
    validate_name,
)

LARGE_TOPIC_PARTITIONS = 1_000
MAX_PARTITIONS = 100_000


class ClusterState:
    """The whole cluster model. All methods run on the event loop thread; none of them block."""

    def __init__(
        self,
        broker_ids: list[int],
        replication_interval_ms: float = 5.0,
        replica_lag_time_max_ms: float = 10_000.0,
        replica_fetch_wait_max_ms: float = 500.0,
        broker_session_timeout_ms: float = 9_000.0,
    ) -> None:
        if not broker_ids:
            raise ValueError("a cluster needs at least one broker")
        self.broker_ids = sorted(broker_ids)
        self.alive: set[int] = set(broker_ids)
        self.topics: dict[str, Topic] = {}
        self.cluster_id = "emulated-kafka-cluster"
        self.listeners: dict[int, tuple[str, int]] = {}
        # Apache Kafka 3.9 serves DeleteRecords v0-2; v3 (LeaderOnly, a KIP draft) is opt-in per broker.
        self.max_delete_records_version: dict[int, int] = dict.fromkeys(broker_ids, 2)
        self.purgatory = DeletePurgatory()
        self.replicator = Replicator(
            replication_interval_ms, replica_lag_time_max_ms, self.purgatory, replica_fetch_wait_max_ms
        )
        self.session_timeout_s = broker_session_timeout_ms / 1000
        # Crashed brokers: no listener, no fetches, but still registered until their session times out.
        self.crashed = self.replicator.crashed
        self._fence_timers: dict[int, asyncio.TimerHandle] = {}
        self._next_leader = 0
        # Called with the topic's name after it is gone (the group coordinator drops its offsets).
        self.topic_deleted_listeners: list[Callable[[str], None]] = []

    async def start(self) -> None:
        self.replicator.start()

    async def stop(self) -> None:
        for timer in self._fence_timers.values():
            timer.cancel()
        self._fence_timers.clear()
        await self.replicator.stop()

    def set_listener(self, broker_id: int, host: str, port: int) -> None:
        self.listeners[broker_id] = (host, port)

    def broker_address(self, broker_id: int) -> tuple[str, int] | None:
        return self.listeners.get(broker_id)

    def alive_brokers(self) -> list[int]:
        return sorted(self.alive)

    def partition(self, topic: str, index: int) -> Partition | None:
        found = self.topics.get(topic)
        if found is None or not 0 <= index < len(found.partitions):
            return None
        return found.partitions[index]

    def leader_of(self, topic: str, partition: int) -> int:
        found = self.partition(topic, partition)
        return found.leader if found is not None and found.leader in self.alive else -1

    def create_topic(
        self,
        name: str,
        partitions: int,
        replication_factor: int | None = None,
        configs: dict[str, str] | None = None,
        assignments: dict[int, list[int]] | None = None,
        validate_only: bool = False,
    ) -> Topic:
        """Validate like CreateTopics; raises TopicError (a ValueError) with the broker's error code."""
        validate_name(name)
        if name in self.topics:
            raise TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        clean = validate_configs(dict(configs or {}))
        replicas = self._plan_replicas(partitions, replication_factor, assignments)
        topic = Topic(name, new_topic_id(), clean)
        if validate_only:
            return topic
        unclean = topic.config("unclean.leader.election.enable").lower() == "true"
        for index, assigned in enumerate(replicas):
            partition = Partition(name, index, assigned, self.alive)
            self._elect(partition, unclean)
            topic.partitions.append(partition)
        self.topics[name] = topic
        if len(topic.partitions) >= LARGE_TOPIC_PARTITIONS:
            # A large model lives for the whole run; without this every full collection rescans it
            # (~80 ms for 10,000 partitions x 3 replicas), stalling requests that happen to trigger one.
            gc.freeze()
        return topic

    def _plan_replicas(
        self, partitions: int, replication_factor: int | None, assignments: dict[int, list[int]] | None
    ) -> list[list[int]]:
        if assignments:
            return self._check_assignments(assignments)
        if partitions <= 0:
            raise TopicError(ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0.")
        if partitions > MAX_PARTITIONS:
            # An emulator limit (Kafka has none): a stray request must not exhaust the test process.
            raise TopicError(ErrorCode.INVALID_PARTITIONS, f"At most {MAX_PARTITIONS} partitions per topic.")
        factor = min(3, len(self.broker_ids)) if replication_factor in (None, -1) else replication_factor
        assert factor is not None
        alive = self.alive_brokers()
        if factor <= 0 or factor > len(alive):
            raise TopicError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"Replication factor: {factor} larger than available brokers: {len(alive)}."
                if factor > 0
                else "Replication factor must be larger than 0.",
            )
        start = self._next_leader
        self._next_leader = (self._next_leader + partitions) % len(alive)
        return assign_replicas(alive, partitions, factor, start)

    def _check_assignments(self, assignments: dict[int, list[int]]) -> list[list[int]]:
        indexes = sorted(assignments)
        sizes = {len(r) for r in assignments.values()}
        if indexes != list(range(len(indexes))) or len(sizes) != 1:
            raise TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Partitions must be 0..N-1, equal sizes")
        for replicas in assignments.values():
            if not replicas or len(set(replicas)) != len(replicas) or set(replicas) - set(self.broker_ids):
                raise TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"Invalid replicas {replicas}")
        return [list(assignments[i]) for i in indexes]

    def delete_topic(self, name: str) -> None:
        topic = self.topics.pop(name, None)
        if topic is None:
            raise TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unknown topic {name}")
        for partition in topic.partitions:
            self.purgatory.fail_partition(partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            partition.notify_change()
        for listener in self.topic_deleted_listeners:
            listener(name)

    def all_partitions(self) -> list[Partition]:
        return [p for topic in self.topics.values() for p in topic.partitions]

    def _elect(self, partition: Partition, unclean: bool = False) -> None:
        """The first alive in-sync replica leads. With no such replica the partition goes offline
        (leader -1), unless the topic sets unclean.leader.election.enable=true: then any alive replica
        leads and becomes the whole ISR, as in Kafka."""
        if partition.leader in self.alive:
            return
        alive = [b for b in partition.replicas if b in self.alive]
        in_sync = [b for b in alive if b in partition.in_sync]
        if in_sync:
            partition.become_leader(in_sync[0])
        elif unclean and alive:
            partition.in_sync = {alive[0]}
            partition.become_leader(alive[0])
        else:
            partition.go_offline()
        self.purgatory.leader_moved(partition)
        partition.notify_change()
        self.replicator.mark(partition)

    def _unclean(self, partition: Partition) -> bool:
        topic = self.topics.get(partition.topic)
        return topic is not None and topic.config("unclean.leader.election.enable").lower() == "true"

    def kill_broker(self, broker_id: int) -> None:
        """A crash: the broker stops answering and fetching at once, but stays registered (alive for
        metadata, the ISR and the low watermark) until ``broker.session.timeout.ms`` passes; then the
        controller fences it as if it had stopped."""
        self._require_broker(broker_id)
        if broker_id not in self.alive or broker_id in self.crashed:
            return
        self.crashed.add(broker_id)
        self.purgatory.expire_broker(broker_id)
        loop = asyncio.get_running_loop()
        self._fence_timers[broker_id] = loop.call_later(self.session_timeout_s, self._fence, broker_id)

    def _fence(self, broker_id: int) -> None:
        self._fence_timers.pop(broker_id, None)
        if broker_id in self.crashed:
            self.stop_broker(broker_id)

    def stop_broker(self, broker_id: int) -> None:
        self._require_broker(broker_id)
        timer = self._fence_timers.pop(broker_id, None)
        if timer is not None:
            timer.cancel()
        self.crashed.discard(broker_id)
        if broker_id not in self.alive:
            return
        self.alive.discard(broker_id)
        self.purgatory.expire_broker(broker_id)
        for partition in self.all_partitions():
            if broker_id not in partition.replicas:
                continue
            partition.leave_isr(broker_id)
            if partition.leader == broker_id:
                self._elect(partition, self._unclean(partition))
            else:
                self.replicator.mark(partition)

    def start_broker(self, broker_id: int) -> None:
        self._require_broker(broker_id)
        if broker_id in self.crashed:
            self.stop_broker(broker_id)  # a restarted broker re-registers: its old incarnation is fenced
        if broker_id in self.alive:
            return
        self.alive.add(broker_id)
        for partition in self.all_partitions():
            if broker_id in partition.replicas:
                if partition.leader < 0 or partition.leader not in self.alive:
                    self._elect(partition, self._unclean(partition))
                self.replicator.mark(partition)

    def _require_broker(self, broker_id: int) -> None:
        if broker_id not in self.broker_ids:
            raise ValueError(f"unknown broker {broker_id}")

    def _require_partition(self, topic: str, index: int) -> Partition:
        found = self.partition(topic, index)
        if found is None:
            raise TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unknown partition {topic}-{index}")
        return found

    def pause_follower(self, topic: str, index: int, broker: int) -> None:
        partition = self._require_partition(topic, index)
        if broker not in partition.replicas:
            raise ValueError(f"broker {broker} holds no replica of {topic}-{index}")
        if broker not in partition.paused:
            partition.paused[broker] = time.monotonic()
            # When the pause outlasts the lag limit the follower leaves the ISR and HW may move.
            self.replicator.mark_later(partition, self.replicator.max_lag_s + 0.01)

    def resume_follower(self, topic: str, index: int, broker: int) -> None:
        partition = self._require_partition(topic, index)
        partition.paused.pop(broker, None)
        self.replicator.mark(partition)

    def move_leader(
        self,
        topic: str,
        index: int,
        broker: int,
        high_watermark: int | None = None,
        catch_up_ms: float = 0.0,
    ) -> None:
        """Elect ``broker``. ``high_watermark`` lowers the new leader's HW (within its LSO and its own HW:
        what it had learned as a follower) and ``catch_up_ms`` keeps the followers from fetching for that
        long, so the HW lags the old leader's (OFFSET_NOT_AVAILABLE, OFFSET_OUT_OF_RANGE) until then."""
        partition = self._require_partition(topic, index)
        if broker not in partition.replicas or broker not in self.alive or broker in self.crashed:
            raise ValueError(f"broker {broker} is not an alive replica of {topic}-{index}")
        if partition.leader == broker:
            return
        if broker not in partition.in_sync:
            # Moving to a replica outside the ISR is an unclean election: it becomes the whole ISR and
            # records it lacks are lost, as with Kafka's unclean leader election.
            partition.in_sync = {broker}
        partition.paused.pop(broker, None)
        log = partition.logs[broker]
        if high_watermark is not None:
            log.high_watermark = max(log.log_start_offset, min(high_watermark, log.high_watermark))
        partition.become_leader(broker)
        self.purgatory.leader_moved(partition)
        if catch_up_ms > 0:
            partition.hold_until = time.monotonic() + catch_up_ms / 1000
            self.replicator.mark_later(partition, catch_up_ms / 1000 + 0.001)
        partition.notify_change()
        self.replicator.mark(partition)

    def leader_changed(self, partition: Partition) -> None:
        """Something a follower must fetch changed on the leader (append, LSO, HW)."""
        self.replicator.mark(partition)

    def snapshot(self) -> dict[str, Any]:
        return snapshot_state(self)
