"""Accepting a deletion request: validate it against the limits and the cluster, resolve ``-1`` to the
high watermark, and store the deletion, its partition tasks and the ``deletion.requested`` audit event
in one transaction (shared with the other requests ready at the time:
``app.services.deletions.group_commit``). Nothing is accepted partially. A retention sweep's
``DeletionCommand`` takes the same path (``submit_command``).

The approval rules of a caller's request are read once, before it is planned: a deletion a rule protects
is planned and assessed once, with the preview its approvers approve, and stored awaiting approval
through the same store. The rules are a snapshot taken at check time, as Kafka's authorizer answers a
request from the ACLs it holds when it checks it: a rule created after the read protects the requests
checked after it, not one already past its check (as an ACL added after Kafka authorized a request does
not undo that request).

Idempotency-Key (scoped to the principal): the same key with the same request (compared by a hash of
its canonical form) answers with the deletion first created; the same key with a different request is
a 422; of concurrent duplicates exactly one creates the deletion (unique constraint), the others
answer with it. One function (``_duplicate``) answers every request something is stored for already: a
replay, a concurrent duplicate that lost the unique constraint, and a request whose COMMIT went through
unseen (stored again with the same id, its insert a duplicate key).
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.adapters.db.models import Deletion
from app.adapters.db.repositories import approvals as approvals_repo
from app.adapters.db.repositories import deletions as repo
from app.adapters.db.session import run_read
from app.audit import canonical_json, events
from app.audit.events import Actor
from app.auth import Principal
from app.domain.approvals import ApprovalRule, Requirement, matching_rules, requirement
from app.domain.commands import DeletionCommand
from app.domain.deletion_requests import DeletionStatus, UnconsumedGroup
from app.errors import ClusterNotFound, FieldError, IdempotencyMismatch, ValidationFailed
from app.metrics import deletions_accepted_total, partitions_accepted_total
from app.schemas.deletions import DeletionCreate
from app.services.deletions.assessment import PlannedDeletion, frozen_preview, plan_deletion
from app.services.deletions.group_commit import Accepted, Hold, KeyTaken
from app.services.deletions.request import DeletionRequest
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
        first = {key: index for index, key in reversed(list(enumerate(keys)))}
        duplicates = [i for i, key in enumerate(keys) if first[key] != i][:MAX_LISTED]
        errors = [FieldError(f"#/partitions/{i}", "duplicate (topic, partition)") for i in duplicates]
        raise ValidationFailed("Each (topic, partition) may appear only once.", errors=errors)
    return timeout_ms


def request_hash(request: DeletionCreate, key: str | None) -> str | None:
    """The SHA-256 of the request's canonical form, stored to tell a replay of ``key`` from a different
    request; None without a key, where nothing ever compares it (and hashing 10,000 entries costs)."""
    if key is None:
        return None
    return hashlib.sha256(canonical_json(request.model_dump(mode="json")).encode()).hexdigest()


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
    """Accept ``command`` as its ``as_whom``, with the checks, plan, store and audit of a request;
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
    request = fields.request
    fields.timeout_ms = check_limits(request, runtime)
    replay, need = await _look_up(runtime, fields, gated=gated)
    if replay is not None:
        return replay
    if not runtime.gateway.has_cluster(request.cluster):
        raise ClusterNotFound(f"Unknown cluster {request.cluster!r}.")
    topics = sorted({p.topic for p in request.partitions})
    await runtime.authorization.check_delete_topics(
        fields.principal, request.cluster, topics, request_id=fields.request_id
    )
    planned = await plan_deletion(
        runtime, request, assess_consumers=assess_consumers, preview=need is not None
    )
    accepted = _accepted(fields, planned, need)
    try:
        await runtime.batcher.store(accepted)
    except (IntegrityError, KeyTaken):
        principal, key, deletion_id = fields.principal.name, fields.key, accepted.deletion.id
        own, keyed = await run_read(runtime.sessionmaker, repo.read_stored, principal, key, deletion_id)
        answer = _stored(fields, accepted) if own else _duplicate(fields, keyed)
        if answer is None:
            raise
        return answer
    return _stored(fields, accepted)


async def _look_up(
    runtime: Runtime, fields: _Fields, *, gated: bool
) -> tuple[Submission | None, Requirement | None]:
    """In one read: the answer of a replayed Idempotency-Key, or else the approval a ``gated`` request's
    topics need (None: no rule protects them)."""
    if fields.key is None and not gated:
        return None, None
    topics = sorted({p.topic for p in fields.request.partitions})
    cluster = fields.request.cluster if gated else None
    keyed, rules = await run_read(runtime.sessionmaker, _stored_and_rules, fields, cluster)
    if (replay := _duplicate(fields, keyed)) is not None:
        return replay, None
    if not rules:  # no cluster asked about, or (as on most clusters) no rule: nothing to match
        return None, None
    return None, requirement(matching_rules(rules, topics))


def _stored_and_rules(
    session: Session, fields: _Fields, cluster: str | None
) -> tuple[Deletion | None, list[ApprovalRule] | None]:
    """The deletion stored under the request's Idempotency-Key, and ``cluster``'s approval rules (None
    when no cluster is asked about)."""
    _, keyed = repo.read_stored(session, fields.principal.name, fields.key)
    return keyed, None if cluster is None else approvals_repo.read_rules(session, cluster)


def _duplicate(fields: _Fields, keyed: Deletion | None) -> Submission | None:
    """The answer of a request whose Idempotency-Key names the stored deletion ``keyed`` (a replay, or a
    concurrent duplicate that won the unique constraint): the same request answers with it, another is a
    422. None when nothing is stored under the key."""
    if keyed is None:
        return None
    if keyed.request_hash != fields.fingerprint:
        raise IdempotencyMismatch("This Idempotency-Key was used with a different request.")
    return Submission(keyed, replayed=True)


def _accepted(fields: _Fields, planned: PlannedDeletion, need: Requirement | None) -> Accepted:
    """The deletion to store, with its event and, when ``need`` says a rule protects it, its hold."""
    deletion = _new_deletion(fields, planned.partitions)
    details = requested_details(
        fields.request, planned.partitions, fields.timeout_ms, fields.key, planned.overridden
    )
    actor = Actor.of(fields.principal, fields.request_id)
    event = events.deletion_requested(actor, fields.request.cluster, deletion.id, details)
    hold = None
    if need is not None:
        hold = Hold(need, frozen_preview(planned), actor)
    return Accepted(deletion, planned.partitions, event, hold)


def _stored(fields: _Fields, accepted: Accepted) -> Submission:
    deletion, planned = accepted.deletion, accepted.planned
    deletions_accepted_total.inc()
    partitions_accepted_total.inc(len(planned))
    log.info(
        "accepted deletion %s: %d partition(s) on cluster %s",
        deletion.id,
        len(planned),
        deletion.cluster,
        extra={"deletion_id": deletion.id, "cluster": deletion.cluster},
    )
    return Submission(deletion, replayed=False, planned=planned)


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


def requested_details(
    request: DeletionRequest,
    planned: Sequence[repo.PlannedPartition],
    timeout_ms: int,
    key: str | None,
    overridden: Sequence[UnconsumedGroup] = (),
) -> dict[str, object]:
    """The ``deletion.requested`` event's details: the request's fields, the consumer groups whose
    unread records it removes (accepted through ``allow_unconsumed``), and its partitions."""
    columns, specs = requested_partitions(planned)
    return {
        "reason": request.reason,
        "leader_only": request.leader_only,
        "timeout_ms": timeout_ms,
        "idempotency_key": key,
        "allow_unconsumed": request.allow_unconsumed,
        "ignore_groups": request.ignore_groups,
        "unconsumed_groups": [
            {"group": g.group, "unread_records": g.unread_records, "partitions": g.partitions}
            for g in overridden
        ],
        "partitions": columns,
        "specs": specs,
    }


def requested_partitions(
    planned: Sequence[repo.PlannedPartition],
) -> tuple[dict[str, list[Any]], list[dict[str, object] | None]]:
    """The ``deletion.requested`` event's ``partitions``, column by column, and its ``specs``.

    ``partitions`` maps ``topic``, ``partition``, ``requested_offset``, ``resolved_offset`` and ``spec``
    to lists whose i-th entries are one partition, in request order; ``spec`` is an index into ``specs``,
    the distinct offset specs (a request usually has one). At 10,000 partitions that encodes and hashes
    several times faster than one object per partition."""
    specs: list[dict[str, object] | None] = []
    by_object: dict[int, int] = {}  # planned partitions of one entry share their spec object
    by_text: dict[str, int] = {}
    indexes: list[int] = []
    for p in planned:
        index = by_object.get(id(p.spec))
        if index is None:
            text = canonical_json(p.spec)
            if text not in by_text:
                by_text[text] = len(specs)
                specs.append(p.spec)
            index = by_object[id(p.spec)] = by_text[text]
        indexes.append(index)
    columns: dict[str, list[Any]] = {
        "topic": [p.partition.topic for p in planned],
        "partition": [p.partition.partition for p in planned],
        "requested_offset": [p.requested_offset for p in planned],
        "resolved_offset": [p.resolved_offset for p in planned],
        "spec": indexes,
    }
    return columns, specs


def _new_deletion(fields: _Fields, planned: Sequence[repo.PlannedPartition]) -> Deletion:
    """The deletion row as stored; ``app.services.deletions.group_commit`` sets its times."""
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
