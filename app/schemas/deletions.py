"""Deletion request and response schemas. Requests are strict: no ``true``, ``"42"`` or ``42.0`` as
integers, no unknown fields; topic names follow Kafka's rules as a full match."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from app.domain.deletions import DeletionStatus, PartitionStatus
from app.schemas.specs import CutTime, GroupId

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


class PartitionOffset(BaseModel):
    """One entry: a topic, a partition (omitted: every partition of the topic) and exactly one spec."""

    model_config = ConfigDict(strict=True, extra="forbid")

    topic: TopicName
    partition: PartitionNumber | None = None
    offset: Offset | None = None
    before: CutTime | None = None
    committed_by: list[GroupId] | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="Delete what all these consumer groups have consumed (their minimum committed offset)",
    )
    to: Literal["end"] | None = Field(default=None, description='"end": up to the high watermark')

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

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "cluster": "demo",
                    "partitions": [{"topic": "orders", "partition": 0, "offset": 1200}],
                    "leader_only": False,
                    "timeout_ms": 30000,
                    "reason": "GDPR erasure request #4711",
                }
            ]
        },
    )

    cluster: ClusterName
    partitions: list[PartitionOffset] = Field(min_length=1)
    leader_only: bool = False
    timeout_ms: int | None = Field(default=None, ge=1, le=INT32_MAX)
    reason: Annotated[str, StringConstraints(min_length=1, max_length=1000), AfterValidator(_has_text)]
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
    topic: str
    partition: int
    requested_offset: int
    resolved_offset: int
    spec: dict[str, Any] | None = Field(default=None, description="The offset spec this partition came from")
    status: PartitionStatus
    low_watermark: int | None
    leader_log_start_offset: int | None
    error_code: str | None
    error_message: str | None
    attempts: int
    updated_at: datetime


class DeletionSummary(BaseModel):
    id: str
    cluster: str
    principal: str
    reason: str
    leader_only: bool
    timeout_ms: int
    status: DeletionStatus
    partition_count: int
    topics: list[str]
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None


class DeletionRead(DeletionSummary):
    request_id: str
    counts: dict[PartitionStatus, int]
    partitions: list[PartitionRead] = Field(
        description="The first partitions in (topic, partition) order; all of them via partitions_next"
    )
    partitions_next: str | None = Field(
        description="Cursor for GET /v1/deletions/{id}/partitions when more partitions exist"
    )


class DeletionPage(BaseModel):
    items: list[DeletionSummary]
    next_cursor: str | None


class PartitionPage(BaseModel):
    items: list[PartitionRead]
    next_cursor: str | None
