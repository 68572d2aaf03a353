"""Ports: what the domain and the executor need from the outside world, as small Protocols.

Adapters in ``app/adapters`` implement them; tests drive them against real parts. ``ExecutorPort`` is
the executor as the group commit of accepted deletions sees it: the group commit
(``app.services.deletions.group_commit``) stores a new deletion's first batch already claimed by this
instance's executor (under a ``Lease``) and hands the rows (``Claim``), with who asked (``Requester``),
over once the transaction committed; ``app.worker.executor.Executor`` implements it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple, Protocol

from app.domain.deletion_requests import PartitionStatus


class TopicPartition(NamedTuple):
    """A named tuple (as in Kafka's clients), not a dataclass: hashing runs in C, which matters when a
    preview or sweep keys half a million offsets by partition (a dataclass hash is a Python call)."""

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
    missing) to what ``app.adapters.kafka.error_codes.describe(error)`` says; None if there is nothing to add.
    """

    error: str
    low_watermark: int = -1
    leader_log_start_offset: int = -1
    message: str | None = None

    @property
    def ok(self) -> bool:
        return self.error == "NONE"


@dataclass(frozen=True)
class TimeOffset:
    """ListOffsets by timestamp: the first offset whose record time is at or after the asked time.

    ``offset`` is -1 when no record is at or after that time (Kafka answers error NONE with -1/-1).
    """

    offset: int
    timestamp: int


class PartitionPlacement(NamedTuple):
    """A named tuple: every plan builds one per partition (10,000 for a big deletion), in C."""

    leader: int
    replicas: tuple[int, ...]


@dataclass(frozen=True)
class TopicLayout:
    """A topic as the metadata shows it; ``internal`` follows Kafka's ``Topic.isInternal`` names."""

    name: str
    internal: bool
    partitions: dict[int, PartitionPlacement]


@dataclass(frozen=True)
class GroupMember:
    """A classic group member; subscriptions and assignment are known only while the group is Stable."""

    member_id: str
    client_id: str
    client_host: str
    subscribed_topics: tuple[str, ...]
    assigned: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class GroupInfo:
    group_id: str
    state: str  # Kafka's group state name, "Dead" for a group that does not exist
    protocol_type: str
    members: tuple[GroupMember, ...]

    @property
    def has_active_members(self) -> bool:
        return bool(self.members)


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

    async def known_high_watermarks(
        self, cluster: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """ListOffsets LATEST like ``high_watermarks``, leaving out the partitions whose leader cannot
        answer now (leader moving or catching up, topic gone) instead of failing for them."""
        ...

    async def log_start_offsets(
        self, cluster: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """ListOffsets EARLIEST on each partition's leader (the leader's log start offset)."""
        ...

    async def last_stable_offsets(
        self, cluster: str, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """ListOffsets LATEST read_committed on each partition's leader: the last stable offset, below
        the high watermark while a transaction is open."""
        ...

    def delete_records_as_answered(
        self,
        cluster: str,
        offsets: Mapping[TopicPartition, int],
        *,
        leader_only: bool,
        timeout_ms: int,
    ) -> AsyncGenerator[dict[TopicPartition, PartitionOutcome], None]:
        """One DeleteRecords per leader with all its partitions, leaders in parallel; each leader's
        outcomes as it answers, every partition exactly once (no retries here: the executor decides what
        to retry)."""
        ...

    async def offsets_for_times(
        self, cluster: str, times: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, TimeOffset]:
        """ListOffsets by timestamp (epoch ms) on each partition's leader, one request per leader."""
        ...

    async def list_topics(self, cluster: str) -> list[str]:
        """Every topic of the cluster, internal topics excluded (retention policies select from these)."""
        ...

    async def topic_layouts(
        self, cluster: str, topics: Sequence[str], *, recent: bool = False
    ) -> dict[str, TopicLayout]:
        """Leaders and replicas of each existing topic among ``topics`` (fresh metadata; ``recent``: may
        come from an answer up to the cluster's ``metadata_max_age_ms`` old when it holds every topic)."""
        ...

    async def topic_configs(
        self, cluster: str, topics: Sequence[str], names: Sequence[str], *, recent: bool = False
    ) -> dict[str, dict[str, str]]:
        """DescribeConfigs: the values of ``names`` for each topic (a name the broker omits is absent;
        ``recent``: may come from an answer up to the cluster's ``metadata_max_age_ms`` old)."""
        ...

    async def delete_records_versions(self, cluster: str) -> dict[int, int]:
        """Each broker's highest DeleteRecords version from its ApiVersions (-1: not advertised)."""
        ...

    async def record_timestamps(
        self, cluster: str, starts: Mapping[TopicPartition, int], *, limit: int
    ) -> dict[TopicPartition, list[tuple[int, int]]]:
        """(offset, timestamp) of up to ``limit`` records from each start offset (Fetch on the leader)."""
        ...

    async def list_groups(self, cluster: str) -> list[str]:
        """Every group of the cluster: ListGroups on every broker (each lists the groups it coordinates)."""
        ...

    async def describe_groups(self, cluster: str, groups: Sequence[str]) -> dict[str, GroupInfo]:
        """DescribeGroups on each group's coordinator; member subscriptions and assignments decoded."""
        ...

    async def committed_offsets(
        self, cluster: str, groups: Sequence[str], partitions: Sequence[TopicPartition]
    ) -> dict[str, Mapping[TopicPartition, int]]:
        """OffsetFetch on each group's coordinator; only partitions the group has a commit on appear."""
        ...

    async def ping(self, cluster: str) -> bool:
        """True when the cluster answered a metadata request."""
        ...


class Claim(NamedTuple):
    """One claimed partition row, with what the executor needs from its deletion. A named tuple, like
    ``TopicPartition``: a batch builds 10,000 of them, and a tuple is built in C."""

    id: int
    deletion_id: str
    topic: str
    partition: int
    resolved_offset: int
    status: PartitionStatus
    fence: int
    attempts: int
    deadline_at: datetime
    cluster: str
    leader_only: bool
    timeout_ms: int
    request_id: str


class Timed(Protocol):
    """What a first claim needs of a deletion: when it was stored and how long it may take."""

    @property
    def created_at(self) -> datetime: ...

    @property
    def timeout_ms(self) -> int: ...


@dataclass(frozen=True)
class Lease:
    """The first claim of a new deletion, taken by the transaction that stores it: its first ``limit``
    partitions are inserted already claimed by ``owner`` until ``expires_at``, in the state ``claim_due``
    would leave them in (``first_claim``)."""

    owner: str
    expires_at: datetime
    limit: int

    def first_claim(self, deletion: Timed) -> tuple[PartitionStatus, int, int, datetime]:
        """Status, fence, attempts and deadline of a row of ``deletion`` claimed for the first time now."""
        deadline = deletion.created_at + timedelta(milliseconds=deletion.timeout_ms)
        return (*self.first_claim_state(), deadline)

    def first_claim_state(self) -> tuple[PartitionStatus, int, int]:
        """Status, fence and attempts of a row claimed for the first time."""
        return PartitionStatus.IN_PROGRESS, 1, 1


@dataclass(frozen=True)
class Requester:
    """Who asked for a deletion: what the executor re-checks authorization with."""

    principal: str
    groups: tuple[str, ...]
    client_host: str

    @property
    def names(self) -> tuple[str, ...]:
        return (self.principal, *(f"Group:{group}" for group in self.groups))


class ExecutorPort(Protocol):
    """What the group commit needs of this instance's executor to hand it freshly stored rows (and whether it
    runs, for the readiness probe).

    ``reserve`` before the storing transaction, then exactly one of ``take`` (committed) or ``release``
    (rolled back) for a lease it returned; ``wake`` when rows were stored pending.
    """

    @property
    def running(self) -> bool:
        """Whether the executor's loop runs (the readiness probe reports it)."""
        ...

    def reserve(self) -> Lease | None:
        """A lease for the first batch of a deletion about to be stored; None when the executor does
        not run or has no batch slot free (the rows are stored pending then)."""
        ...

    def take(self, lease: Lease, claims: Sequence[Claim], requesters: Mapping[str, Requester]) -> None:
        """Work ``claims``, stored and committed under ``lease``, at once; ``requesters`` by deletion id."""
        ...

    def release(self, lease: Lease) -> None:
        """Give back the slot of a ``reserve`` whose deletion was not stored."""
        ...

    def wake(self) -> None:
        """Look for due rows now (rows were stored pending)."""
        ...
