"""Schemas of registered consumers (Spark queries) and their progress reports. Requests are strict."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from app.domain.consumer_groups import SPARK_GROUP_PREFIX
from app.schemas.deletions import INT64_MAX, TopicName

NAME_PATTERN = r"^[A-Za-z0-9._-]+$"
ConsumerName = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=NAME_PATTERN)]
PartitionKey = Annotated[str, StringConstraints(min_length=1, max_length=10, pattern=r"^(0|[1-9][0-9]*)$")]
Position = Annotated[int, Field(ge=0, le=INT64_MAX)]
QueryId = Annotated[str, StringConstraints(min_length=1, max_length=64)]


def _group_name(group: str) -> str:
    if group.startswith(SPARK_GROUP_PREFIX):
        raise ValueError(
            f"{SPARK_GROUP_PREFIX}* groups are Spark's own and hold no consumed offsets; "
            "register the query as a Spark consumer instead"
        )
    return group


GroupName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=255),
    AfterValidator(_group_name),
    Field(json_schema_extra={"not": {"pattern": f"^{re.escape(SPARK_GROUP_PREFIX)}"}}),
]

# What ``_checkpoint_for_spark`` checks: a checkpoint location belongs to a Spark consumer.
_SPARK_ONLY_CHECKPOINT: dict[str, Any] = {
    "not": {
        "required": ["kind", "checkpoint_location"],
        "properties": {"kind": {"const": "kafka_group"}, "checkpoint_location": {"type": "string"}},
    }
}


class ConsumerCreate(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra=_SPARK_ONLY_CHECKPOINT)

    name: ConsumerName = Field(
        description="The consumer's name: the Kafka consumer group id, or the Spark query's name (a GROUP "
        "resource for authorization either way)"
    )
    kind: Literal["spark", "kafka_group"] = Field(
        default="spark",
        description="spark: a Spark query that reports its progress (or whose checkpoint is read); "
        "kafka_group: a Kafka consumer group, whose committed offsets Kafka keeps",
    )
    checkpoint_location: Annotated[str, StringConstraints(min_length=1, max_length=2048)] | None = Field(
        default=None,
        description=(
            "Spark only: where the service reads the query's checkpoint; a local path or object-store URL "
            "under the operator's PURGE_SPARK_CHECKPOINT_ROOTS (none configured: pull mode is off)"
        ),
    )

    @model_validator(mode="after")
    def _checkpoint_for_spark(self) -> ConsumerCreate:
        if self.kind == "kafka_group" and self.checkpoint_location is not None:
            raise ValueError("checkpoint_location applies to Spark consumers only")
        if self.kind == "kafka_group":
            _group_name(self.name)
        return self


class ProgressRead(BaseModel):
    """A consumer's position on one partition."""

    topic: str = Field(description="The topic")
    partition: int = Field(description="The partition")
    offset: int = Field(description="The next offset to read: every record before it was consumed")
    query_id: str = Field(description="The Spark query id that reported it")
    run_id: str = Field(description="The Spark run id that reported it")
    batch_id: int = Field(description="The Spark batch that reported it")
    updated_at: datetime = Field(description="When it last moved")


class ConsumerRead(BaseModel):
    """A registered consumer, with its positions."""

    cluster: str = Field(description="The cluster")
    name: str = Field(description="The consumer's name (its GROUP for authorization)")
    kind: str = Field(description="spark or kafka_group")
    checkpoint_location: str | None = Field(description="Spark pull mode: the checkpoint the service reads")
    owner: str = Field(description="Who registered it")
    created_at: datetime = Field(description="When it was registered")
    updated_at: datetime = Field(description="When it last changed")
    progress: list[ProgressRead] = Field(
        default_factory=list, description="Its reported position per partition (Spark consumers)"
    )


class ConsumerPage(BaseModel):
    """The consumers of a cluster the caller may see."""

    items: list[ConsumerRead] = Field(description="The consumers")


class ProgressReport(BaseModel):
    """A committed batch's end offsets (the next offset to read per partition), as Spark reports them."""

    model_config = ConfigDict(strict=True, extra="forbid")

    query_id: QueryId = Field(description="The Spark query's id (StreamingQueryProgress.id)")
    run_id: QueryId = Field(description="The Spark query's run id (StreamingQueryProgress.runId)")
    batch_id: Annotated[int, Field(ge=0, le=INT64_MAX)] = Field(description="The committed batch's id")
    offsets: dict[TopicName, dict[PartitionKey, Position]] = Field(
        min_length=1,
        description="The batch's end offsets: topic -> partition (as a string) -> the next offset to read",
    )


class ProgressResult(BaseModel):
    """What a progress report changed."""

    consumer: str = Field(description="The consumer the report was for")
    applied: int = Field(description="Partitions whose position moved forward (or were first reported)")
    ignored: int = Field(description="Partitions left alone: a duplicate, older or out-of-order batch")
