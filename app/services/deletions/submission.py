"""Accepting a deletion request: validate it against the limits and the cluster, resolve ``-1`` to the
high watermark, and store the deletion, its partition tasks and the ``deletion.requested`` audit event
in one transaction (shared with the other requests ready at the time: ``app.services.deletions.intake``).
Nothing is accepted partially. A retention sweep's ``DeletionCommand`` takes the same path
(``submit_command``).

Idempotency-Key (scoped to the principal): the same key with the same request (compared by a hash of
its canonical form) answers with the deletion first created; the same key with a different request is
a 422; of concurrent duplicates exactly one creates the deletion (unique constraint), the others
answer with it.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.exc import IntegrityError

from app.adapters.db.models import Deletion
from app.adapters.db.repositories import deletions as repo
from app.adapters.db.session import read_session
from app.audit import NewEvent, canonical_json, events
from app.audit.events import Actor
from app.auth import Principal
from app.domain.approvals import Requirement
from app.domain.commands import DeletionCommand
from app.domain.deletions import DeletionStatus
from app.domain.impact import UnconsumedGroup
from app.errors import ClusterNotFound, FieldError, IdempotencyMismatch, ValidationFailed
from app.metrics import deletions_accepted_total, partitions_accepted_total
from app.schemas.deletions import DeletionCreate
from app.services.approvals import gate
from app.services.deletions.assessment import assess, guard_unconsumed, plan_deletion
from app.services.deletions.early import EarlyInsert, stores_early
from app.services.deletions.intake import Accepted, Stored
from app.services.deletions.plan import plan_checked, predicted_partitions
from app.services.deletions.request import DeletionRequest
from app.services.deletions.requested import requested_details
from app.services.runtime import Runtime

MAX_LISTED = 50
log = logging.getLogger("kafka_purge.api")


@dataclass(frozen=True)
class Submission:
    deletion: Deletion
    replayed: bool
    # The partitions as stored, for a new deletion (a replay reads them back instead).
    planned: Sequence[repo.PlannedPartition] = ()


def check_limits(request: DeletionRequest, runtime: Runtime) -> int:
    """The request's timeout; 422 for too many partitions, a timeout over the limit, duplicates."""
    limits = runtime.settings.limits
    if len(request.partitions) > limits.max_partitions:
        raise ValidationFailed(
            f"At most {limits.max_partitions} partitions per request, got {len(request.partitions)}.",
            errors=[FieldError("#/partitions", f"more than {limits.max_partitions} partitions")],
        )
    timeout_ms = request.timeout_ms or limits.default_timeout_ms
    if timeout_ms > limits.max_timeout_ms:
        raise ValidationFailed(
            "timeout_ms is over the limit.",
            errors=[FieldError("#/timeout_ms", f"must be at most {limits.max_timeout_ms}")],
        )
    keys = [(item.topic, item.partition) for item in request.partitions]
    if len(set(keys)) != len(keys):
        raise ValidationFailed(
            "Each (topic, partition) may appear only once.", errors=_duplicates(keys)[:MAX_LISTED]
        )
    return timeout_ms


def _duplicates(keys: Sequence[tuple[str, int | None]]) -> list[FieldError]:
    seen: set[tuple[str, int | None]] = set()
    duplicates: list[FieldError] = []
    for index, key in enumerate(keys):
        if key in seen:
            duplicates.append(FieldError(f"#/partitions/{index}", "duplicate (topic, partition)"))
        seen.add(key)
    return duplicates


def request_hash(request: DeletionCreate, key: str | None) -> str | None:
    """The SHA-256 of the request's canonical form, stored to tell a replay of ``key`` from a different
    request; None without a key, where nothing ever compares it (and hashing 10,000 entries costs)."""
    if key is None:
        return None
    return hashlib.sha256(canonical_json(request.model_dump(mode="json")).encode()).hexdigest()


def _replay(existing: Deletion, fingerprint: str | None) -> Submission:
    if existing.request_hash != fingerprint:
        raise IdempotencyMismatch("This Idempotency-Key was used with a different request.")
    return Submission(existing, replayed=True)


async def _existing(runtime: Runtime, principal: Principal, key: str | None) -> Deletion | None:
    if key is None:
        return None
    async with read_session(runtime.sessionmaker) as session:
        return await repo.find_by_idempotency_key(session, principal.name, key)


async def _stored(runtime: Runtime, deletion_id: str) -> Deletion | None:
    async with read_session(runtime.sessionmaker) as session:
        return await repo.get_deletion(session, deletion_id)


async def submit_deletion(
    runtime: Runtime,
    request: DeletionCreate,
    *,
    principal: Principal,
    request_id: str,
    idempotency_key: str | None,
) -> Submission:
    """Accept a ``POST /v1/deletions`` body (not a dry run) as ``principal``."""
    fingerprint = request_hash(request, idempotency_key)
    fields = _Fields(request, principal, request_id, idempotency_key, fingerprint)
    return await _submit(runtime, fields, gated=True)


async def submit_command(runtime: Runtime, command: DeletionCommand, *, request_id: str) -> Submission:
    """Accept ``command`` as its ``as_whom``, with the checks, plan, intake and audit of a request;
    consumer groups are not read again when the command says its cuts are bounded by them."""
    whom = command.as_whom
    principal = Principal(whom.principal.removeprefix("User:"), whom.groups, whom.client_host)
    fields = _Fields(command, principal, request_id, None, None)
    return await _submit(runtime, fields, assess_consumers=not command.consumers_read)


async def _submit(
    runtime: Runtime, fields: _Fields, *, assess_consumers: bool = True, gated: bool = False
) -> Submission:
    """``gated``: a request of a caller, held for approval when a rule protects its topics (a retention
    sweep's command is not: the sweep held its policy instead unless its approval answers for every
    protected topic it matched, ``app.services.approvals.policies``)."""
    request, principal, key, fingerprint = fields.request, fields.principal, fields.key, fields.fingerprint
    fields.timeout_ms = check_limits(request, runtime)
    if (existing := await _existing(runtime, principal, key)) is not None:
        return _replay(existing, fingerprint)
    if not runtime.gateway.has_cluster(request.cluster):
        raise ClusterNotFound(f"Unknown cluster {request.cluster!r}.")
    topics = sorted({p.topic for p in request.partitions})
    await runtime.authorization.check_delete_topics(
        principal, request.cluster, topics, request_id=fields.request_id
    )
    early = _early(runtime, fields, gated=gated)
    try:
        planned, overridden = await plan_deletion(runtime, request, assess_consumers=assess_consumers)
    except BaseException:
        if early is not None:
            await early.abandon()
        raise
    stored = None
    if early is not None:
        deletion = early.deletion
        stored = await early.commit(planned, _requested_event(fields, deletion, planned, overridden))
    try:
        if stored is None:
            # An early insert that failed keeps its id: if its COMMIT went through unseen, storing it
            # again is a duplicate key, not a second deletion.
            deletion = early.deletion if early is not None else _new_deletion(fields, planned)
            event = _requested_event(fields, deletion, planned, overridden)
            stored = await runtime.intake.store(Accepted(deletion, planned, event, gated=gated))
    except IntegrityError:
        if (committed := await _stored(runtime, deletion.id)) is not None:
            # An earlier transaction storing it was cut while committing, and did commit.
            stored = Stored(committed, created=True)
        elif (winner := await _existing(runtime, principal, key)) is not None:
            # A concurrent request with the same key won the unique constraint; answer with its deletion.
            return _replay(winner, fingerprint)
        else:
            raise
    if stored.held is not None:
        return await _submit_protected(runtime, fields, stored.held)
    if not stored.created:
        return _replay(stored.deletion, fingerprint)
    deletions_accepted_total.inc()
    partitions_accepted_total.inc(len(planned))
    log.info(
        "accepted deletion %s: %d partition(s) on cluster %s",
        deletion.id,
        len(planned),
        request.cluster,
        extra={"deletion_id": deletion.id, "cluster": request.cluster},
    )
    return Submission(stored.deletion, replayed=False, planned=planned)


async def _submit_protected(runtime: Runtime, fields: _Fields, need: Requirement) -> Submission:
    """A deletion an approval rule protects: planned and checked as any other, then stored awaiting
    approval with the preview approvers approve (every group's unread records, read now)."""
    request, principal = fields.request, fields.principal
    plan = await plan_checked(runtime, request)
    assessment = await assess(runtime, request, plan, preview=True)
    overridden = guard_unconsumed(request, assessment)
    planned = plan.partitions()
    deletion = _new_deletion(fields, planned)
    preview = gate.frozen_preview(planned, assessment.impacts)
    requested = _requested_event(fields, deletion, planned, overridden)
    try:
        await gate.hold(
            runtime, (deletion, planned), requested, need, preview, Actor.of(principal, fields.request_id)
        )
    except IntegrityError:
        if (winner := await _existing(runtime, principal, fields.key)) is None:
            raise
        return _replay(winner, fields.fingerprint)
    deletions_accepted_total.inc()
    partitions_accepted_total.inc(len(planned))
    return Submission(deletion, replayed=False, planned=planned)


def _early(runtime: Runtime, fields: _Fields, *, gated: bool) -> EarlyInsert | None:
    """A large deletion of concrete offsets starts storing while its checks ask the cluster."""
    if not stores_early(runtime.sessionmaker, len(fields.request.partitions)):
        return None
    predicted = predicted_partitions(fields.request)
    if predicted is None:
        return None
    deletion = _new_deletion(fields, predicted)
    return EarlyInsert(runtime.sessionmaker, runtime.executor, deletion, predicted, gated=gated)


@dataclass
class _Fields:
    """What the stored deletion and its event take from the request and its caller; ``timeout_ms`` is
    set once the request passed the limits."""

    request: DeletionRequest
    principal: Principal
    request_id: str
    key: str | None
    fingerprint: str | None
    timeout_ms: int = 0


def _requested_event(
    fields: _Fields,
    deletion: Deletion,
    planned: Sequence[repo.PlannedPartition],
    overridden: Sequence[UnconsumedGroup],
) -> NewEvent:
    details = requested_details(fields.request, planned, fields.timeout_ms, fields.key, overridden)
    actor = Actor.of(fields.principal, fields.request_id)
    return events.deletion_requested(actor, fields.request.cluster, deletion.id, details)


def _new_deletion(fields: _Fields, planned: Sequence[repo.PlannedPartition]) -> Deletion:
    """The deletion row as stored; ``app.services.deletions.intake`` sets its times when it stores it."""
    now = datetime.now(UTC)
    request, principal = fields.request, fields.principal
    return Deletion(
        id=str(uuid.uuid4()),
        cluster=request.cluster,
        principal=principal.name,
        principal_groups=list(principal.groups),
        client_host=principal.client_host[:64],
        request_id=fields.request_id,
        reason=request.reason,
        leader_only=request.leader_only,
        timeout_ms=fields.timeout_ms,
        status=DeletionStatus.PENDING.value,
        partition_count=len(planned),
        topics=sorted({p.partition.topic for p in planned}),
        idempotency_key=fields.key,
        request_hash=fields.fingerprint,
        created_at=now,
        updated_at=now,
        finished_at=None,
    )
