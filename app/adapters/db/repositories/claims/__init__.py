"""The executor's work queue: partition rows claimed with leases and fenced writes.

A row is *due* when its status is pending, in_progress or leader_truncated, ``next_attempt_at`` has come,
nobody holds a live lease on it, and its deletion is not cancelled. A lease is held while
``lease_expires_at`` is set and in the future; giving it back clears ``lease_expires_at`` but keeps
``lease_owner``, so the row (and the completion audit) names the instance that claimed it last.
Claiming sets the lease, moves pending to in_progress, counts the attempt and bumps ``fence``; every later
write by the claimer names the fence it claimed with, so a worker whose lease expired (and whose row was
claimed again) changes nothing.

PostgreSQL claims with ``SELECT ... FOR UPDATE SKIP LOCKED`` then one UPDATE, in one transaction, so
concurrent instances never wait on each other. SQLite ignores SKIP LOCKED (SQLAlchemy drops it silently);
there the claim is one ``UPDATE ... RETURNING`` inside the BEGIN IMMEDIATE of ``write_transaction``, which
already serializes writers.

The deadline (``deadline_at``) is set on a row's first claim, i.e. counted from the first send: a service
that was down when the request arrived does not fail work it never started.

A new deletion's first batch can be claimed by the transaction that stores it (``Lease``): its first
rows are inserted in the state a claim leaves them in and come back as claims from the insert
(``deletions.create_deletions``; SQLite reads them back with ``leased_claims``), so the accepting
instance's executor sends them at once, without a claim round of its own. To every other instance they
are rows under a live lease, like any claimed row.

Functions only flush; the caller's transaction commits.
"""

from app.adapters.db.repositories.claims.claiming import (
    claim_due,
    lease_claims,
    leased_claims,
    release_leases,
    renew_leases,
)
from app.adapters.db.repositories.claims.common import PartitionUpdate
from app.adapters.db.repositories.claims.writing import (
    lock_deletions,
    mark_started,
    partition_outcomes,
    set_deletion_status,
    status_counts,
    write_updates,
)
from app.domain.ports import Claim, Lease

__all__ = [
    "Claim",
    "Lease",
    "PartitionUpdate",
    "claim_due",
    "lease_claims",
    "leased_claims",
    "lock_deletions",
    "mark_started",
    "partition_outcomes",
    "release_leases",
    "renew_leases",
    "set_deletion_status",
    "status_counts",
    "write_updates",
]
