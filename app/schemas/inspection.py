"""Responses of the preview (``dry_run``), erasure evidence and the offsets view of a topic."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class GroupLagRead(BaseModel):
    group: str
    committed_offset: int
    unread_records: int = Field(description="Records this group has not read that the deletion removes")


class TimestampCheckRead(BaseModel):
    sampled: int = Field(description="Records read around the cut (up to 5 on each side)")
    newer_below_cut: int = Field(description="Records that would be deleted although not older than the time")
    older_at_or_after_cut: int = Field(description="Records kept although older than the time")
    out_of_order: bool = Field(description="Timestamps around the cut are not in time order")


class CutTimeRead(BaseModel):
    cut_ms: int = Field(description="The asked time, epoch ms")
    record_found: bool = Field(description="False: no record at or after the time, so the cut is the end")
    first_record_timestamp_ms: int | None = Field(description="Time of the first record kept")
    timestamps: TimestampCheckRead | None = Field(
        description="What the records around the cut show (null when not sampled: over 1,000 partitions)"
    )


class PartitionPreview(BaseModel):
    topic: str
    partition: int
    spec: dict[str, Any]
    resolved_offset: int
    log_start_offset: int
    high_watermark: int
    records_deleted: int
    predicted_outcome: str = Field(description="Kafka's error name, NONE when the deletion would succeed")
    unconsumed_groups: list[GroupLagRead]
    cut_time: CutTimeRead | None = None


class GroupSummaryRead(BaseModel):
    group: str
    unread_records: int
    partitions: int
    state: str
    has_active_members: bool


class DeletionPreview(BaseModel):
    dry_run: Literal[True] = True
    cluster: str
    leader_only: bool
    partition_count: int
    records_deleted: int
    would_be_refused: bool = Field(description="Whether the same request without dry_run would be refused")
    refusals: list[str]
    unconsumed_groups: list[GroupSummaryRead]
    partitions: list[PartitionPreview]
    audit_event_id: int
    preview_hash: str = Field(
        description="SHA-256 of the preview's canonical JSON without audit_event_id and preview_hash "
        "(sorted keys, no whitespace), kept in the deletion.previewed audit event"
    )


class PartitionEvidence(BaseModel):
    topic: str
    partition: int
    status: str
    resolved_offset: int
    log_start_offset: int | None = Field(
        description="The leader's log start offset now (ListOffsets EARLIEST)"
    )
    verdict: Literal["deleted", "not_deleted", "unknown"]


class AuditPosition(BaseModel):
    event_id: int
    hash: str
    action: str


class DeletionEvidence(BaseModel):
    deletion_id: str
    cluster: str
    status: str
    checked_at: str
    partitions: list[PartitionEvidence]
    verdicts: dict[str, int]
    requested_event: AuditPosition | None
    completed_event: AuditPosition | None
    note: str


class GroupOffsetRead(BaseModel):
    group: str
    committed_offset: int
    lag: int


class PartitionOffsetsRead(BaseModel):
    partition: int
    leader: int
    replicas: list[int]
    log_start_offset: int
    high_watermark: int
    groups: list[GroupOffsetRead]


class TopicGroupRead(BaseModel):
    group: str
    state: str
    has_active_members: bool
    total_lag: int


class TopicOffsetsRead(BaseModel):
    cluster: str
    topic: str
    internal: bool
    cleanup_policy: str
    partitions: list[PartitionOffsetsRead]
    groups: list[TopicGroupRead]
