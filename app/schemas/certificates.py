"""The claims of an erasure certificate (``app.certificates`` signs them) and the public JWK set."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class CertificatePartition(BaseModel):
    topic: str = Field(description="The topic")
    partition: int = Field(description="The partition")
    status: str = Field(description="Its final status: succeeded, failed or cancelled")
    resolved_offset: int = Field(description="The offset records were deleted below (resolved on accept)")
    low_watermark: int | None = Field(
        description="The low watermark (minimum log start offset over the replicas) DeleteRecords answered"
    )
    leader_log_start_offset: int | None = Field(
        description="The leader's log start offset DeleteRecords v3 answered (null from older brokers)"
    )
    error_code: str | None = Field(
        description="The Kafka error that failed it, or null; on a succeeded partition, the error the broker "
        "answered beside a low watermark that already covered the offset (REQUEST_TIMED_OUT), if any"
    )


class CertificateApprover(BaseModel):
    principal: str = Field(description="Who approved the deletion")
    approved_at: str = Field(description="When (RFC 3339)")


class CertificateDeletion(BaseModel):
    id: str = Field(description="The deletion's id")
    cluster: str = Field(description="The Kafka cluster")
    requester: str = Field(description="The principal that requested it")
    reason: str = Field(description="Why, as the requester said")
    status: str = Field(description="Its terminal status")
    leader_only: bool = Field(description="Whether it waited for the leader only (DeleteRecords v3)")
    requested_at: str = Field(description="When it was accepted (RFC 3339)")
    finished_at: str | None = Field(description="When it reached its terminal status (RFC 3339)")
    approvers: list[CertificateApprover] = Field(description="Who approved it before it ran")
    partitions: list[CertificatePartition] = Field(description="Every partition, in (topic, partition) order")


class AuditAnchor(BaseModel):
    event_id: int = Field(description="The event's position in the audit chain")
    hash: str = Field(description="The event's chain hash (SHA-256, hex)")
    action: str = Field(description="The event's action")


class CertificateAudit(BaseModel):
    requested: AuditAnchor | None = Field(description="The deletion.requested event")
    completed: AuditAnchor | None = Field(
        description="The event that ended the deletion: deletion.completed, or deletion.cancelled"
    )


class CertificateClaims(BaseModel):
    iss: str = Field(description="The service that issued it (its public URL)")
    sub: str = Field(description="The deletion's id")
    jti: str = Field(description="This certificate's own id")
    iat: int = Field(description="When it was issued (seconds since the epoch)")
    deletion: CertificateDeletion = Field(description="What was erased, by whom and why")
    audit: CertificateAudit = Field(description="Where the deletion stands in the audit chain")


class SigningKeysRead(BaseModel):
    """A JWK set (RFC 7517): the keys that verify what this service signs (certificates, checkpoints)."""

    keys: list[dict[str, Any]] = Field(
        description="Public keys as JWKs with kid, alg and use: the current signing key first, then the "
        "retired ones"
    )
