"""Ports: what the domain and the executor need from the outside world, as small Protocols.

Adapters in ``app/adapters`` implement them; tests drive them against real parts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, order=True)
class TopicPartition:
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class PartitionOutcome:
    """One partition's result of a DeleteRecords request, as the broker (or the client side) said it.

    ``error`` is Kafka's error name (``NONE`` on success, e.g. ``OFFSET_OUT_OF_RANGE``), or a
    client-side condition such as ``UNSUPPORTED_VERSION`` (LeaderOnly against a broker below v3) or
    ``NETWORK_EXCEPTION`` (the leader could not be reached). ``leader_log_start_offset`` is -1 when the
    broker answered with DeleteRecords v2 or older. ``message`` adds specifics (which broker, what was
    missing) to what ``app.adapters.kafka.errors.describe(error)`` says; None when there is nothing to add.
    """

    error: str
    low_watermark: int = -1
    leader_log_start_offset: int = -1
    message: str | None = None

    @property
    def ok(self) -> bool:
        return self.error == "NONE"


@dataclass(frozen=True)
class PartitionInfo:
    leader: int
    replicas: tuple[int, ...]
    log_start_offset: int
    high_watermark: int


class KafkaGateway(Protocol):
    """The Kafka operations kafka-purge performs on a configured cluster (by name)."""

    def has_cluster(self, cluster: str) -> bool: ...

    async def topic_partitions(self, cluster: str, topics: Sequence[str]) -> dict[str, int]:
        """Partition count of each existing topic among ``topics`` (fresh metadata)."""
        ...

    async def high_watermarks(
        self, cluster: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """ListOffsets LATEST on each partition's leader."""
        ...

    async def log_start_offsets(
        self, cluster: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """ListOffsets EARLIEST on each partition's leader (the leader's log start offset)."""
        ...

    async def delete_records(
        self,
        cluster: str,
        offsets: Mapping[TopicPartition, int],
        *,
        leader_only: bool,
        timeout_ms: int,
    ) -> dict[TopicPartition, PartitionOutcome]:
        """One DeleteRecords per leader with all its partitions, leaders in parallel; every partition's
        outcome (no retries here: the executor decides what to retry)."""
        ...

    async def ping(self, cluster: str) -> bool:
        """True when the cluster answered a metadata request."""
        ...
