"""Deletion request and response schemas, and the domain offset spec of each request entry
(``entry_specs``). Requests are strict: no ``true``, ``"42"`` or ``42.5`` as integers (``42.0`` is 42, as
JSON Schema counts it: ``app.api.routing``), no unknown fields; topic names follow Kafka's rules as a
full match."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from app.domain.deletion_requests import DeletionStatus, PartitionStatus
from app.domain.offsets import OffsetSpec
from app.schemas.selection import exactly_one
from app.schemas.specs import CutTime, GroupId, epoch_ms

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
TOPIC_PATTERN = r"^[a-zA-Z0-9._-]+$"
SPEC_FIELDS = ("offset", "before", "committed_by", "to")


def _not_dot_names(name: str) -> str:
    if name in {".", ".."}:
        raise ValueError("Topic name cannot be '.' or '..'")
    return name


TopicName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=249, pattern=TOPIC_PATTERN),
    AfterValidator(_not_dot_names),
]
ClusterName = Annotated[str, StringConstraints(min_length=1, max_length=255)]
PartitionNumber = Annotated[int, Field(ge=0, le=INT32_MAX)]
Offset = Annotated[
    int, Field(ge=-1, le=INT64_MAX, description="Delete records before this offset; -1 = high watermark")
]


def _has_text(reason: str) -> str:
    if not reason.strip():
        raise ValueError("Reason must not be blank")
    return reason


Reason = Annotated[str, StringConstraints(min_length=1, max_length=1000), AfterValidator(_has_text)]


class PartitionOffset(BaseModel):
    """One entry: a topic, a partition (omitted: every partition of the topic) and exactly one spec."""

    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra=exactly_one(*SPEC_FIELDS))

    topic: TopicName = Field(description="The topic, as Kafka names it (letters, digits, '.', '_', '-')")
    partition: PartitionNumber | None = Field(
        default=None, description="The partition; omitted: every partition of the topic"
    )
    offset: Offset | None = Field(
        default=None,
        description="Delete the records before this offset (the new log start offset); -1: the high "
        "watermark, i.e. every record there now",
    )
    before: CutTime | None = Field(
        default=None,
        description="Delete the records older than this time: RFC 3339 with an offset "
        "(2026-11-20T00:00:00Z) or epoch milliseconds. Resolved with ListOffsets by timestamp to the "
        "first offset at or after it; when every record is older, the high watermark",
    )
    committed_by: list[GroupId] | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="Delete what all these consumer groups have consumed: their minimum committed offset "
        "on the partition. A group without a commit there refuses the request (fail closed)",
    )
    to: Literal["end"] | None = Field(
        default=None, description='"end": up to the high watermark, every record there now (as offset -1)'
    )

    @model_validator(mode="after")
    def _exactly_one_spec(self) -> PartitionOffset:
        # Runs for every entry (10,000 in a big request): plain attribute reads, no list.
        given = (
            (self.offset is not None)
            + (self.before is not None)
            + (self.committed_by is not None)
            + (self.to is not None)
        )
        if given != 1:
            raise ValueError(f"exactly one of {', '.join(SPEC_FIELDS)} is required, got {given}")
        return self


class DeletionCreate(BaseModel):
    """A request to delete the records before ``offset`` in each listed partition."""

    model_config = ConfigDict(strict=True, extra="forbid")

    cluster: ClusterName = Field(
        description="A configured cluster's name (PURGE_CLUSTERS); the demo's is demo"
    )
    partitions: list[PartitionOffset] = Field(
        min_length=1,
        description="What to delete: each entry a topic, optionally a partition, and exactly one offset "
        "spec (offset, before, committed_by or to); each (topic, partition) once",
        # As far as JSON Schema says "each (topic, partition) once": no two entries alike.
        json_schema_extra={"uniqueItems": True},
    )
    leader_only: bool = Field(
        default=False,
        description="Succeed once the leader truncated, without waiting for followers (DeleteRecords v3, "
        "the LeaderOnly KIP); against brokers without v3 those partitions fail with UNSUPPORTED_VERSION",
    )
    timeout_ms: int | None = Field(
        ge=1,
        le=INT32_MAX,
        default=None,
        description="How long the executor keeps trying, in milliseconds (default from settings: 30000; "
        "at most the configured maximum)",
    )
    reason: Reason = Field(
        description="Why the records go (a ticket, an erasure request); kept in the deletion and its "
        "audit events"
    )
    dry_run: bool = Field(default=False, description="Preview only: answer 200 with the impact, send nothing")
    allow_unconsumed: bool = Field(
        default=False, description="Delete even records some consumer group has not read yet (audited)"
    )
    ignore_groups: list[GroupId] = Field(
        default_factory=list,
        max_length=1000,
        description="Consumer groups the unconsumed-records guard skips",
    )


class PartitionRead(BaseModel):
    """One partition of a deletion: what was asked, the offset it was resolved to, and its progress."""

    topic: str = Field(description="The topic")
    partition: int = Field(description="The partition")
    requested_offset: int = Field(
        description="The offset as requested: the concrete offset given, or -1 (the high watermark, or "
        "a before, committed_by or to spec, which spec names)"
    )
    resolved_offset: int = Field(
        description="The concrete offset resolved at accept time: records before it are deleted; the only "
        "offset ever sent to Kafka"
    )
    spec: dict[str, Any] | None = Field(default=None, description="The offset spec this partition came from")
    status: PartitionStatus = Field(
        description="awaiting_approval (a four-eyes approval rule holds it; nothing is sent), pending, "
        "in_progress, leader_truncated (the leader reached the offset, followers not yet), succeeded, failed "
        "or cancelled"
    )
    low_watermark: int | None = Field(
        description="The minimum log start offset over the alive replicas, as DeleteRecords last answered "
        "(null before an answer)"
    )
    leader_log_start_offset: int | None = Field(
        description="The leader's log start offset from a DeleteRecords v3 answer (null on brokers that "
        "answer v0-2)"
    )
    error_code: str | None = Field(
        description="Kafka's error name for the last answer, or the service's own (AUTHORIZATION_REVOKED, "
        "NETWORK_EXCEPTION); null before an answer and when the last answer was NONE. A succeeded partition "
        "may carry the broker's error (REQUEST_TIMED_OUT) when the low watermark it answered already "
        "covered the offset: the records are deleted all the same"
    )
    error_message: str | None = Field(description="What the error means for this partition, if any")
    attempts: int = Field(description="DeleteRecords requests sent for this partition so far")
    updated_at: datetime = Field(description="When the partition's row last changed")


class DeletionSummary(BaseModel):
    """A deletion request as listed."""

    id: str = Field(description="The deletion's id (a UUID)")
    cluster: str = Field(description="The cluster it deletes on")
    principal: str = Field(description="Who requested it: User:<name>, or the policy owner for a sweep")
    reason: str = Field(description="Why, as the requester said")
    leader_only: bool = Field(description="Whether a partition succeeds once the leader truncated")
    timeout_ms: int = Field(description="How long the executor keeps trying, in milliseconds")
    status: DeletionStatus = Field(
        description="pending, in_progress, succeeded, partially_failed, failed or cancelled, rolled up "
        "from its partitions; a deletion an approval rule protects is first awaiting_approval, then "
        "approved (pending until claimed), or ends rejected or expired (nothing sent)"
    )
    partition_count: int = Field(description="How many partitions it names")
    topics: list[str] = Field(description="The topics it touches")
    created_at: datetime = Field(description="When it was accepted")
    updated_at: datetime = Field(description="When it last changed")
    finished_at: datetime | None = Field(description="When its last partition finished (null until then)")


class DeletionRead(DeletionSummary):
    """A deletion request with its counts and first partitions."""

    request_id: str = Field(description="The X-Request-ID of the request that created it (also in the logs)")
    counts: dict[PartitionStatus, int] = Field(description="How many partitions are in each status")
    partitions: list[PartitionRead] = Field(
        description="The first partitions in (topic, partition) order; all of them via partitions_next"
    )
    partitions_next: str | None = Field(
        description="Cursor for GET /v1/deletions/{id}/partitions when more partitions exist"
    )


class DeletionPage(BaseModel):
    """One page of deletions, newest first."""

    items: list[DeletionSummary] = Field(description="The deletions of this page")
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null on the last page")


class PartitionPage(BaseModel):
    """One page of a deletion's partitions, in (topic, partition) order."""

    items: list[PartitionRead] = Field(description="The partitions of this page")
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null on the last page")


def spec_of(entry: Any) -> OffsetSpec:
    """The domain spec of one validated request entry."""
    if entry.before is not None:
        return OffsetSpec(before_ms=epoch_ms(entry.before))
    if entry.committed_by is not None:
        return OffsetSpec(committed_by=tuple(entry.committed_by))
    if entry.to is not None:
        return OffsetSpec(to_end=True)
    return OffsetSpec(offset=entry.offset)


def stored_spec(entry: Any) -> dict[str, object]:
    """What the deletion shows as the spec of each partition an entry named."""
    spec: dict[str, object] = spec_of(entry).as_json()
    if entry.before is not None:
        spec["before"] = entry.before
    if entry.partition is None:
        spec["all_partitions"] = True
    return spec


def entry_specs(entries: Sequence[Any]) -> tuple[list[OffsetSpec], list[dict[str, object]]]:
    """``spec_of`` and ``stored_spec`` of each entry. Entries that say the same share one object of each:
    a 10,000-entry request usually names a handful of specs, each built once."""
    known: dict[tuple[object, ...], tuple[OffsetSpec, dict[str, object]]] = {}
    specs: list[OffsetSpec] = []
    stored: list[dict[str, object]] = []
    for entry in entries:
        groups = entry.committed_by
        key = (
            entry.offset,
            entry.before,
            None if groups is None else tuple(groups),
            entry.to,
            entry.partition is None,
        )
        pair = known.get(key)
        if pair is None:
            pair = known[key] = (spec_of(entry), stored_spec(entry))
        specs.append(pair[0])
        stored.append(pair[1])
    return specs, stored
