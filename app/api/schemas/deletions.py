"""Deletion request and response schemas. Requests are strict: no ``true``, ``"42"`` or ``42.0`` as
integers, no unknown fields; topic names follow Kafka's rules as a full match."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from app.domain.deletions import DeletionStatus, PartitionStatus

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
TOPIC_PATTERN = r"^[a-zA-Z0-9._-]+$"


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
    model_config = ConfigDict(strict=True, extra="forbid")

    topic: TopicName
    partition: PartitionNumber
    offset: Offset


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


class PartitionRead(BaseModel):
    topic: str
    partition: int
    requested_offset: int
    resolved_offset: int
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
