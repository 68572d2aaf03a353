"""The executor as the group commit of accepted deletions sees it: the rows it works (``Claim``), the
lease a new deletion's first batch is stored under (``Lease``), who asked (``Requester``), and the
``ExecutorPort`` Protocol.

The group commit (``app.services.deletions.group_commit``) stores a new deletion's first batch already
claimed by this instance's executor and hands the rows over once the transaction committed; it reaches
the executor only through ``ExecutorPort``, which ``app.worker.executor.Executor`` implements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple, Protocol

from app.domain.deletions import PartitionStatus


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
