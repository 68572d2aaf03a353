"""Responses of the preview (``dry_run``), erasure evidence and the offsets view of a topic."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class GroupLagRead(BaseModel):
    """A consumer group that has not read up to the cut on one partition."""

    group: str = Field(description="The consumer group's id")
    committed_offset: int = Field(description="The group's committed offset on the partition")
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
        description="What the records around the cut show (null when not sampled: over 1,000 partitions, "
        "or the service's Kafka principal may not READ the topic)"
    )


class PartitionPreview(BaseModel):
    """What deleting on one partition would do."""

    topic: str = Field(description="The topic")
    partition: int = Field(description="The partition")
    spec: dict[str, Any] = Field(description="The offset spec this partition came from")
    resolved_offset: int = Field(description="The concrete offset the spec resolves to now")
    log_start_offset: int = Field(description="The partition's log start offset now (its first record)")
    high_watermark: int = Field(
        description="The partition's high watermark now (the offset after its last record, also of "
        "transactions still open)"
    )
    last_stable_offset: int = Field(
        description="The partition's last stable offset now: the first offset of the oldest open "
        "transaction (what read_committed consumers read up to); the high watermark when none is open"
    )
    records_deleted: int = Field(
        description="Records that would go: the resolved offset minus the log start offset"
    )
    uncommitted_records: int = Field(
        description="Records of open transactions among those that would go (between the last stable "
        "offset and the cut): -1 and end reach the high watermark, past the last stable offset"
    )
    predicted_outcome: str = Field(description="Kafka's error name, NONE when the deletion would succeed")
    unconsumed_groups: list[GroupLagRead] = Field(
        description="Consumer groups whose committed offset is below the cut: they would lose records "
        "they have not read"
    )
    cut_time: CutTimeRead | None = Field(
        default=None, description="For a before spec: the time and what the records around the cut show"
    )


class GroupSummaryRead(BaseModel):
    """A consumer group that would lose unread records, over the whole request."""

    group: str = Field(description="The consumer group's id")
    unread_records: int = Field(description="Records it has not read that the deletion would remove")
    partitions: int = Field(description="Partitions on which it would lose records")
    state: str = Field(description="The group's state as Kafka reports it (Stable, Empty, ...)")
    has_active_members: bool = Field(description="Whether consumers are connected to the group now")


class DeletionPreview(BaseModel):
    """The answer to a request with dry_run true: what it would do; nothing was sent to Kafka."""

    dry_run: Literal[True] = Field(default=True, description="Always true: a preview")
    cluster: str = Field(description="The cluster")
    leader_only: bool = Field(description="As requested")
    partition_count: int = Field(description="How many partitions the request names")
    records_deleted: int = Field(description="Records that would go, over every partition")
    would_be_refused: bool = Field(description="Whether the same request without dry_run would be refused")
    refusals: list[str] = Field(description="Why it would be refused (unread records, compacted topics, ...)")
    unconsumed_groups: list[GroupSummaryRead] = Field(
        description="Every consumer group that has not read up to the cut, with what it would lose"
    )
    partitions: list[PartitionPreview] = Field(
        description="Per partition: offsets, records and the predicted outcome"
    )
    audit_event_id: int = Field(description="The deletion.previewed audit event that records this preview")
    preview_hash: str = Field(
        description="SHA-256 of the preview's canonical JSON without audit_event_id and preview_hash "
        "(sorted keys, no whitespace), kept in the deletion.previewed audit event"
    )


class PartitionEvidence(BaseModel):
    """Whether one partition's records are gone."""

    topic: str = Field(description="The topic")
    partition: int = Field(description="The partition")
    status: str = Field(description="The partition's status in the deletion")
    resolved_offset: int = Field(description="The offset the deletion was to reach")
    log_start_offset: int | None = Field(
        description="The leader's log start offset now (ListOffsets EARLIEST)"
    )
    verdict: Literal["deleted", "not_deleted", "unknown"] = Field(
        description="deleted: the log start offset reached the resolved offset; not_deleted: it has not; "
        "unknown: the leader could not be asked"
    )


class AuditPosition(BaseModel):
    """An audit event's place in the hash chain."""

    event_id: int = Field(description="The event's id (its position in the chain)")
    hash: str = Field(description="The event's SHA-256 chain hash, hex")
    action: str = Field(description="The audit action, e.g. deletion.requested")


class DeletionEvidence(BaseModel):
    """Erasure evidence: whether the deletion's records are gone now, anchored in the audit chain."""

    deletion_id: str = Field(description="The deletion's id")
    cluster: str = Field(description="The cluster")
    status: str = Field(description="The deletion's status")
    checked_at: str = Field(description="When the leaders were asked, RFC 3339")
    partitions: list[PartitionEvidence] = Field(description="The verdict per partition")
    verdicts: dict[str, int] = Field(description="How many partitions have each verdict")
    requested_event: AuditPosition | None = Field(description="The deletion.requested audit event")
    completed_event: AuditPosition | None = Field(
        description="The audit event of its completion (null while it runs)"
    )
    note: str = Field(description="What the evidence shows and what it cannot (segment files on disk)")


class GroupOffsetRead(BaseModel):
    """A consumer group's position on one partition."""

    group: str = Field(description="The consumer group's id")
    committed_offset: int = Field(description="The group's committed offset on the partition")
    lag: int = Field(description="Records after the committed offset: the high watermark minus it")


class PartitionOffsetsRead(BaseModel):
    """One partition's offsets and replicas."""

    partition: int = Field(description="The partition")
    leader: int = Field(description="The id of the broker leading it (-1: none)")
    replicas: list[int] = Field(description="The ids of the brokers holding a replica")
    log_start_offset: int = Field(description="The offset of its first record (what DeleteRecords moves)")
    high_watermark: int = Field(description="The offset after its last committed record")
    groups: list[GroupOffsetRead] = Field(description="Each consumer group's committed offset and lag here")


class TopicGroupRead(BaseModel):
    """A consumer group with commits on the topic."""

    group: str = Field(description="The consumer group's id")
    state: str = Field(description="The group's state as Kafka reports it (Stable, Empty, ...)")
    has_active_members: bool = Field(description="Whether consumers are connected to the group now")
    total_lag: int = Field(description="Records it has not read, over every partition of the topic")


class TopicOffsetsRead(BaseModel):
    """A topic's partitions with their offsets, and its consumer groups' lag."""

    cluster: str = Field(description="The cluster")
    topic: str = Field(description="The topic")
    internal: bool = Field(
        description="Whether Kafka marks it internal (__consumer_offsets, ...): never deleted in"
    )
    cleanup_policy: str = Field(description="Its cleanup.policy: delete, compact or compact,delete")
    partitions: list[PartitionOffsetsRead] = Field(description="Every partition, in order")
    groups: list[TopicGroupRead] = Field(description="Every consumer group with commits on the topic")
