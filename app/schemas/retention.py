"""Schemas of consumers, their progress reports, retention policies and policy runs. Requests are strict."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from app.domain.consumer_groups import SPARK_GROUP_PREFIX
from app.domain.topic_patterns import MAX_PATTERN_LENGTH, TopicPatternError, compile_topic_pattern
from app.schemas.deletions import INT64_MAX, TopicName

NAME_PATTERN = r"^[A-Za-z0-9._-]+$"
ConsumerName = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=NAME_PATTERN)]
PolicyName = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=NAME_PATTERN)]
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


GroupName = Annotated[str, StringConstraints(min_length=1, max_length=255), AfterValidator(_group_name)]


class ConsumerCreate(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    name: ConsumerName
    kind: Literal["spark", "kafka_group"] = "spark"
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
    topic: str
    partition: int
    offset: int
    query_id: str
    run_id: str
    batch_id: int
    updated_at: datetime


class ConsumerRead(BaseModel):
    cluster: str
    name: str
    kind: str
    checkpoint_location: str | None
    owner: str
    created_at: datetime
    updated_at: datetime
    progress: list[ProgressRead] = Field(default_factory=list)


class ConsumerPage(BaseModel):
    items: list[ConsumerRead]


class ProgressReport(BaseModel):
    """A committed batch's end offsets (the next offset to read per partition), as Spark reports them."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "query_id": "b99e0765",
                    "run_id": "785dac2b",
                    "batch_id": 7,
                    "offsets": {"inter.orders": {"0": 200}},
                }
            ]
        },
    )

    query_id: QueryId
    run_id: QueryId
    batch_id: Annotated[int, Field(ge=0, le=INT64_MAX)]
    offsets: dict[TopicName, dict[PartitionKey, Position]] = Field(min_length=1)


class ProgressResult(BaseModel):
    consumer: str
    applied: int = Field(description="Partitions whose position moved forward (or were first reported)")
    ignored: int = Field(description="Partitions left alone: a duplicate, older or out-of-order batch")


class TopicSelection(BaseModel):
    """Exactly one of ``prefix``, ``regex`` (RE2 syntax, full match, at most 512 characters) or ``names``;
    or ``read_by_connectors``: the topics the policy's Kafka Connect sinks read (KIP-762's
    ``delete.committed.topics``), intersected with at most one of the others.

    The regex is compiled here (RE2 is linear-time, so compiling it costs little); it is first matched
    against topics after the caller was authenticated."""

    model_config = ConfigDict(strict=True, extra="forbid")

    prefix: Annotated[str, StringConstraints(min_length=1, max_length=249, pattern=NAME_PATTERN)] | None = (
        None
    )
    regex: Annotated[str, StringConstraints(min_length=1, max_length=MAX_PATTERN_LENGTH)] | None = Field(
        default=None, description="RE2 syntax (no backreferences or lookaround), matched against whole names"
    )
    names: list[TopicName] | None = Field(default=None, min_length=1, max_length=10_000)
    read_by_connectors: Literal[True] | None = Field(
        default=None, description="Exactly the topics the policy's Kafka Connect sinks read now"
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> TopicSelection:
        chosen = sum(v is not None for v in (self.prefix, self.regex, self.names))
        if self.read_by_connectors and chosen > 1:
            raise ValueError("read_by_connectors is intersected with at most one of prefix, regex or names")
        if not self.read_by_connectors and chosen != 1:
            raise ValueError("give exactly one of prefix, regex or names, or read_by_connectors")
        if self.regex is not None:
            try:
                compile_topic_pattern(self.regex)
            except TopicPatternError as exc:
                raise ValueError(str(exc)) from None
        return self


class ConnectChoice(BaseModel):
    """Sink connectors of a Kafka Connect cluster (``PURGE_CONNECT``) whose consumer groups bound
    deletion; ``all_sinks``: every sink connector the Connect cluster runs at each sweep."""

    model_config = ConfigDict(strict=True, extra="forbid")

    cluster: ConsumerName
    connectors: list[ConsumerName] | Literal["all_sinks"] = Field(
        description='Connector names, or "all_sinks"'
    )

    @model_validator(mode="after")
    def _someone(self) -> ConnectChoice:
        if isinstance(self.connectors, list) and not self.connectors:
            raise ValueError('name at least one connector, or use "all_sinks"')
        if isinstance(self.connectors, list) and len(self.connectors) > 1000:
            raise ValueError("at most 1000 connectors")
        return self


class ConsumerChoice(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    groups: list[GroupName] = Field(default_factory=list, max_length=1000)
    all_groups: bool = Field(default=False, description="Every consumer group of the cluster")
    spark: list[ConsumerName] = Field(default_factory=list, max_length=1000)
    connect: ConnectChoice | None = None

    @model_validator(mode="after")
    def _someone(self) -> ConsumerChoice:
        if self.all_groups and self.groups:
            raise ValueError("all_groups covers every group: name no groups beside it")
        if not (self.groups or self.all_groups or self.spark or self.connect):
            raise ValueError('name at least one group, Spark consumer or Connect sink, or use "all_groups"')
        return self


Consumers = ConsumerChoice | Literal["all_groups"]


class PolicyCreate(BaseModel):
    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "name": "intermediate",
                    "topics": {"prefix": "intermediate."},
                    "consumers": {"groups": ["billing"], "spark": ["enricher"]},
                    "min_age_seconds": 600,
                    "min_records": 1000,
                    "interval_seconds": 300,
                }
            ]
        },
    )

    name: PolicyName
    topics: TopicSelection
    consumers: Consumers
    min_age_seconds: int = Field(default=0, ge=0, le=10 * 365 * 86400)
    min_records: int = Field(default=1, ge=0, le=INT64_MAX)
    interval_seconds: int = Field(default=300, ge=1, le=7 * 86400)
    leader_only: bool = False
    enabled: bool = True
    skip_foreign_active_groups: bool | None = Field(
        default=None,
        description=(
            "KIP-762: skip (and warn in the run) any topic an active consumer group outside the policy's "
            "consumers may read; default: on for policies with Connect sinks or all_groups"
        ),
    )
    await_previous_deletion: bool | None = Field(
        default=None,
        description=(
            "Start no sweep while a deletion of the previous sweep is not terminal; default: on for "
            "policies with Connect sinks"
        ),
    )

    @model_validator(mode="after")
    def _connectors_for_topics(self) -> PolicyCreate:
        connect = isinstance(self.consumers, ConsumerChoice) and self.consumers.connect is not None
        if self.topics.read_by_connectors and not connect:
            raise ValueError("topics.read_by_connectors needs Connect sinks among the consumers")
        return self


class PolicyUpdate(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    topics: TopicSelection | None = None
    consumers: Consumers | None = None
    min_age_seconds: int | None = Field(default=None, ge=0, le=10 * 365 * 86400)
    min_records: int | None = Field(default=None, ge=0, le=INT64_MAX)
    interval_seconds: int | None = Field(default=None, ge=1, le=7 * 86400)
    leader_only: bool | None = None
    enabled: bool | None = None
    skip_foreign_active_groups: bool | None = None
    await_previous_deletion: bool | None = None


class PolicyRead(BaseModel):
    cluster: str
    name: str
    topics: dict[str, Any]
    consumers: dict[str, Any] | Literal["all_groups"]
    min_age_seconds: int
    min_records: int
    interval_seconds: int
    leader_only: bool
    enabled: bool
    skip_foreign_active_groups: bool
    await_previous_deletion: bool
    owner: str
    created_at: datetime
    updated_at: datetime
    last_run_at: datetime | None
    next_run_at: datetime


class PolicyPage(BaseModel):
    items: list[PolicyRead]


class SkippedPartition(BaseModel):
    topic: str
    partition: int
    reason: str
    detail: str


class PolicyRunRead(BaseModel):
    id: int
    started_at: datetime
    finished_at: datetime | None
    status: str
    partitions_matched: int
    partitions_planned: int
    partitions_skipped: int
    skip_counts: dict[str, int]
    skipped: list[SkippedPartition] = Field(description="The first skipped partitions with their reasons")
    warnings: list[str]
    deletion_id: str | None
    deletion_ids: list[str] = Field(description="Every deletion of the run (a large sweep makes several)")
    error: str | None


class PolicyRunPage(BaseModel):
    items: list[PolicyRunRead]
    next_cursor: str | None
