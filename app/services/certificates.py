"""Issuing erasure certificates: the signed record of what a finished deletion erased
(``app.certificates`` signs and verifies them), and the public keys that verify them.

Who may read a deletion may get its certificate (otherwise 404, as for the deletion). Only a deletion in a
terminal state has one (409 before), and only a service with a signing key issues one (409 without:
none is ever made up). Issuing one is a read, like the erasure evidence, and is not audited.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.adapters.db.models import AuditEvent, Deletion, PartitionDeletion
from app.adapters.db.repositories import approvals as approval_repo
from app.adapters.db.repositories import evidence as repo
from app.adapters.db.session import read_session
from app.audit.chain import rfc3339
from app.auth import Principal
from app.certificates import sign_certificate
from app.domain.approvals import Decision, SubjectKind
from app.domain.deletion_requests import DeletionStatus
from app.errors import Conflict
from app.schemas.certificates import (
    AuditAnchor,
    CertificateApprover,
    CertificateAudit,
    CertificateClaims,
    CertificateDeletion,
    CertificatePartition,
)
from app.services.deletions.visibility import visible_deletion
from app.services.runtime import Runtime

TERMINAL = frozenset(
    {
        DeletionStatus.SUCCEEDED,
        DeletionStatus.PARTIALLY_FAILED,
        DeletionStatus.FAILED,
        DeletionStatus.CANCELLED,
    }
)
# The events that end a deletion: the executor's summary, or a cancel of the last partitions waiting.
COMPLETING_ACTIONS = ("deletion.completed", "deletion.cancelled")
NO_SIGNING_KEY = (
    "This service has no signing key, so it issues no erasure certificates: configure an Ed25519 or P-256 "
    "private key in PURGE_AUDIT_SIGNING_KEY or PURGE_AUDIT_SIGNING_KEY_FILE (kept off the database host)."
)


@dataclass(frozen=True)
class Approver:
    principal: str
    approved_at: datetime


async def approvers_of(session: AsyncSession, deletion: Deletion) -> list[Approver]:
    """Who approved ``deletion`` before it ran (four-eyes approval), in approval order; none when its
    topics needed no approval."""
    request = await approval_repo.latest_request(session, SubjectKind.DELETION, deletion.id)
    if request is None:
        return []
    decided = await approval_repo.decisions(session, [request.id])
    return [Approver(d.principal, d.decided_at) for d in decided if d.decision == Decision.APPROVE.value]


async def issue_certificate(runtime: Runtime, principal: Principal, deletion_id: str) -> str:
    """The compact JWS certifying what the deletion erased, signed now with the current signing key."""
    key = runtime.signing_keys.current
    async with read_session(runtime.sessionmaker) as session:
        deletion = await visible_deletion(session, runtime.authorization, principal, deletion_id)
        if key is None:
            raise Conflict(NO_SIGNING_KEY)
        if deletion.status not in TERMINAL:
            raise Conflict(
                f"Deletion {deletion.id!r} is {deletion.status}: a certificate is issued once it has "
                "finished (succeeded, partially_failed, failed or cancelled)."
            )
        rows = await repo.all_partitions(session, deletion.id)
        requested = await repo.first_event(session, deletion.id, "deletion.requested")
        completed = await repo.last_event(session, deletion.id, COMPLETING_ACTIONS)
        approvers = await approvers_of(session, deletion)
    claims = certificate_claims(
        runtime.settings.public_url, deletion, rows, approvers, (requested, completed), datetime.now(UTC)
    )
    return sign_certificate(key, claims)


def certificate_claims(
    issuer: str,
    deletion: Deletion,
    rows: list[PartitionDeletion],
    approvers: list[Approver],
    anchors: tuple[AuditEvent | None, AuditEvent | None],
    issued_at: datetime,
) -> dict[str, Any]:
    """The certificate's claims as JSON values."""
    claims = CertificateClaims(
        iss=issuer,
        sub=deletion.id,
        jti=str(uuid.uuid4()),
        iat=int(issued_at.timestamp()),
        deletion=CertificateDeletion(
            id=deletion.id,
            cluster=deletion.cluster,
            requester=deletion.principal,
            reason=deletion.reason,
            status=deletion.status,
            leader_only=deletion.leader_only,
            requested_at=rfc3339(deletion.created_at),
            finished_at=rfc3339(deletion.finished_at) if deletion.finished_at is not None else None,
            approvers=[
                CertificateApprover(principal=a.principal, approved_at=rfc3339(a.approved_at))
                for a in approvers
            ],
            partitions=[_partition(row) for row in rows],
        ),
        audit=CertificateAudit(requested=_anchor(anchors[0]), completed=_anchor(anchors[1])),
    )
    return claims.model_dump(mode="json")


def _partition(row: PartitionDeletion) -> CertificatePartition:
    return CertificatePartition(
        topic=row.topic,
        partition=row.partition,
        status=row.status,
        resolved_offset=row.resolved_offset,
        low_watermark=row.low_watermark,
        leader_log_start_offset=row.leader_log_start_offset,
        error_code=row.error_code,
    )


def _anchor(event: AuditEvent | None) -> AuditAnchor | None:
    return AuditAnchor(event_id=event.id, hash=event.hash, action=event.action) if event is not None else None
