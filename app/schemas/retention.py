"""Schemas of retention policies and their runs. Requests are strict."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from app.schemas.consumers import NAME_PATTERN, ConsumerName, GroupName
from app.schemas.deletions import INT64_MAX
from app.schemas.selection import at_most_one, exactly_one, given
from app.schemas.topic_selectors import TopicSelectors

PolicyName = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=NAME_PATTERN)]
_SELECTORS = ("prefix", "regex", "names")
_SELECTION: dict[str, Any] = {
    "anyOf": [
        exactly_one(*_SELECTORS),
        {"allOf": [given("read_by_connectors"), at_most_one(*_SELECTORS)]},
    ]
}


class TopicSelection(TopicSelectors):
    """Exactly one of ``prefix``, ``regex`` (RE2 syntax, full match, at most 512 characters) or ``names``;
    or ``read_by_connectors``: the topics the policy's Kafka Connect sinks read (KIP-762's
    ``delete.committed.topics``), intersected with at most one of the others.

    The regex is compiled here (RE2 is linear-time, so compiling it costs little); it is first matched
    against topics after the caller was authenticated."""

    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra=_SELECTION)

    read_by_connectors: Literal[True] | None = Field(
        default=None, description="Exactly the topics the policy's Kafka Connect sinks read now"
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> TopicSelection:
        chosen = self.chosen()
        if self.read_by_connectors and chosen > 1:
            raise ValueError("read_by_connectors is intersected with at most one of prefix, regex or names")
        if not self.read_by_connectors and chosen != 1:
            raise ValueError("give exactly one of prefix, regex or names, or read_by_connectors")
        self.check_regex()
        return self


# What ``ConnectChoice._someone`` checks: 1 to 1000 connector names, or "all_sinks".
_SOME_CONNECTORS: dict[str, Any] = {
    "allOf": [
        {"properties": {"connectors": {"anyOf": [{"type": "string"}, {"minItems": 1, "maxItems": 1000}]}}}
    ]
}


class ConnectChoice(BaseModel):
    """Sink connectors of a Kafka Connect cluster (``PURGE_CONNECT``) whose consumer groups bound
    deletion; ``all_sinks``: every sink connector the Connect cluster runs at each sweep."""

    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra=_SOME_CONNECTORS)

    cluster: ConsumerName = Field(description="The Connect cluster, as named in PURGE_CONNECT")
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


def _non_empty(field: str) -> dict[str, Any]:
    return {"required": [field], "properties": {field: {"minItems": 1}}}


_ALL_GROUPS = {"required": ["all_groups"], "properties": {"all_groups": {"const": True}}}
# At least one of them, and no groups beside all_groups (what ``_someone`` checks).
_SOMEONE: dict[str, Any] = {
    "anyOf": [_non_empty("groups"), _ALL_GROUPS, _non_empty("spark"), given("connect")],
    "not": {"allOf": [_ALL_GROUPS, _non_empty("groups")]},
}


class ConsumerChoice(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra=_SOMEONE)

    groups: list[GroupName] = Field(
        default_factory=list,
        max_length=1000,
        description="Kafka consumer groups that must have committed past a record before it may go",
    )
    all_groups: bool = Field(default=False, description="Every consumer group of the cluster")
    spark: list[ConsumerName] = Field(
        default_factory=list,
        max_length=1000,
        description="Registered Spark consumers that must have reported past a record before it may go",
    )
    connect: ConnectChoice | None = Field(
        default=None, description="Kafka Connect sink connectors whose consumer groups must have committed"
    )

    @model_validator(mode="after")
    def _someone(self) -> ConsumerChoice:
        if self.all_groups and self.groups:
            raise ValueError("all_groups covers every group: name no groups beside it")
        if not (self.groups or self.all_groups or self.spark or self.connect):
            raise ValueError('name at least one group, Spark consumer or Connect sink, or use "all_groups"')
        return self


Consumers = ConsumerChoice | Literal["all_groups"]

# What ``_connectors_for_topics`` checks: topics read by connectors need Connect sinks among the consumers
# given with them (a policy update that leaves its consumers unchanged is checked against the stored ones).
_CONNECTORS_FOR_TOPICS: dict[str, Any] = {
    "if": {
        "required": ["topics", "consumers"],
        "properties": {
            "topics": {
                "required": ["read_by_connectors"],
                "properties": {"read_by_connectors": {"const": True}},
            },
            "consumers": {"not": {"type": "null"}},
        },
    },
    "then": {
        "properties": {
            "consumers": {
                "type": "object",
                "required": ["connect"],
                "properties": {"connect": {"type": "object"}},
            }
        }
    },
}
CONNECTORS_FOR_TOPICS = "topics.read_by_connectors needs Connect sinks among the consumers"


def _has_connect(consumers: Consumers | None) -> bool:
    return isinstance(consumers, ConsumerChoice) and consumers.connect is not None


TOPICS_HELP = (
    "The topics it trims: exactly one of prefix, regex (RE2, full match) or names, or read_by_connectors "
    "(intersected with at most one of them)"
)
CONSUMERS_HELP = (
    "Who must have read a record before it may go: Kafka groups, Spark consumers and Connect sinks, or "
    "all_groups (every group with commits on the topic)"
)
MIN_AGE_HELP = "Keep records younger than this many seconds"
MIN_RECORDS_HELP = "Skip a partition unless the cut is at least this many records past its log start offset"
INTERVAL_HELP = "Seconds between sweeps"
LEADER_ONLY_HELP = "Its deletions succeed once the leader truncated (DeleteRecords v3)"
ENABLED_HELP = "Whether it sweeps"
UNCHANGED = "Omitted: unchanged. "
SKIP_FOREIGN_HELP = (
    "KIP-762: skip (and warn in the run) any topic an active consumer group outside the policy's "
    "consumers may read; default: on for policies with Connect sinks or all_groups"
)
AWAIT_PREVIOUS_HELP = (
    "Start no sweep while a deletion of the previous sweep is not terminal; default: on for policies "
    "with Connect sinks"
)


class PolicyCreate(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra=_CONNECTORS_FOR_TOPICS)

    name: PolicyName = Field(description="The policy's name, unique in the cluster")
    topics: TopicSelection = Field(description=TOPICS_HELP)
    consumers: Consumers = Field(description=CONSUMERS_HELP)
    min_age_seconds: int = Field(default=0, ge=0, le=10 * 365 * 86400, description=MIN_AGE_HELP)
    min_records: int = Field(default=1, ge=0, le=INT64_MAX, description=MIN_RECORDS_HELP)
    interval_seconds: int = Field(default=300, ge=1, le=7 * 86400, description=INTERVAL_HELP)
    leader_only: bool = Field(default=False, description=LEADER_ONLY_HELP)
    enabled: bool = Field(default=True, description=ENABLED_HELP)
    skip_foreign_active_groups: bool | None = Field(default=None, description=SKIP_FOREIGN_HELP)
    await_previous_deletion: bool | None = Field(default=None, description=AWAIT_PREVIOUS_HELP)

    @model_validator(mode="after")
    def _connectors_for_topics(self) -> PolicyCreate:
        if self.topics.read_by_connectors and not _has_connect(self.consumers):
            raise ValueError(CONNECTORS_FOR_TOPICS)
        return self


class PolicyUpdate(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra=_CONNECTORS_FOR_TOPICS)

    topics: TopicSelection | None = Field(default=None, description=UNCHANGED + TOPICS_HELP)
    consumers: Consumers | None = Field(default=None, description=UNCHANGED + CONSUMERS_HELP)
    min_age_seconds: int | None = Field(
        default=None, ge=0, le=10 * 365 * 86400, description=UNCHANGED + MIN_AGE_HELP
    )
    min_records: int | None = Field(
        default=None, ge=0, le=INT64_MAX, description=UNCHANGED + MIN_RECORDS_HELP
    )
    interval_seconds: int | None = Field(
        default=None, ge=1, le=7 * 86400, description=UNCHANGED + INTERVAL_HELP
    )
    leader_only: bool | None = Field(default=None, description=UNCHANGED + LEADER_ONLY_HELP)
    enabled: bool | None = Field(default=None, description=UNCHANGED + ENABLED_HELP)
    skip_foreign_active_groups: bool | None = Field(default=None, description=UNCHANGED + SKIP_FOREIGN_HELP)
    await_previous_deletion: bool | None = Field(default=None, description=UNCHANGED + AWAIT_PREVIOUS_HELP)

    @model_validator(mode="after")
    def _connectors_for_topics(self) -> PolicyUpdate:
        connectors = self.topics is not None and bool(self.topics.read_by_connectors)
        if connectors and self.consumers is not None and not _has_connect(self.consumers):
            raise ValueError(CONNECTORS_FOR_TOPICS)
        return self


class PolicyRead(BaseModel):
    """A retention policy."""

    cluster: str = Field(description="The cluster")
    name: str = Field(description="The policy's name")
    topics: dict[str, Any] = Field(description=TOPICS_HELP)
    consumers: dict[str, Any] | Literal["all_groups"] = Field(description=CONSUMERS_HELP)
    min_age_seconds: int = Field(description=MIN_AGE_HELP)
    min_records: int = Field(description=MIN_RECORDS_HELP)
    interval_seconds: int = Field(description=INTERVAL_HELP)
    leader_only: bool = Field(description=LEADER_ONLY_HELP)
    enabled: bool = Field(description=ENABLED_HELP)
    skip_foreign_active_groups: bool = Field(description=SKIP_FOREIGN_HELP)
    await_previous_deletion: bool = Field(description=AWAIT_PREVIOUS_HELP)
    owner: str = Field(description="Who created it; its sweeps run with the owner's rights")
    created_at: datetime = Field(description="When it was created")
    updated_at: datetime = Field(description="When it last changed")
    last_run_at: datetime | None = Field(description="When it last swept (null: never yet)")
    next_run_at: datetime = Field(description="When it sweeps next")
    approval_status: str | None = Field(
        default=None,
        description=(
            "null when it sweeps; `pending` while a four-eyes approval rule holds it (created or widened "
            "over protected topics), `rejected` or `expired` when that approval ended without it (change "
            "the policy to ask again)"
        ),
    )


class PolicyPage(BaseModel):
    """The policies of a cluster the caller may see."""

    items: list[PolicyRead] = Field(description="The policies")


class SkippedPartition(BaseModel):
    """A partition a sweep left alone, and why."""

    topic: str = Field(description="The topic")
    partition: int = Field(description="The partition")
    reason: str = Field(
        description="Why: no_consumers, consumer_without_position, offset_query_failed, "
        "position_beyond_high_watermark, foreign_active_group, nothing_to_delete, below_min_records, "
        "records_too_young or owner_not_authorized"
    )
    detail: str = Field(description="The reason in words")


class PolicyRunRead(BaseModel):
    """One sweep of a policy."""

    id: int = Field(description="The run's id")
    started_at: datetime = Field(description="When the sweep started")
    finished_at: datetime | None = Field(description="When it finished (null while it runs)")
    status: str = Field(description="submitted, nothing_to_delete, denied or failed")
    partitions_matched: int = Field(description="Partitions of the topics the policy covers")
    partitions_planned: int = Field(description="Partitions it submitted a deletion for")
    partitions_skipped: int = Field(description="Partitions it left alone")
    skip_counts: dict[str, int] = Field(description="How many partitions were skipped for each reason")
    skipped: list[SkippedPartition] = Field(description="The first skipped partitions with their reasons")
    warnings: list[str] = Field(
        description="What the sweep noticed, e.g. active groups an all_groups policy skips"
    )
    deletion_id: str | None = Field(description="The first deletion it submitted (null when none)")
    deletion_ids: list[str] = Field(description="Every deletion of the run (a large sweep makes several)")
    error: str | None = Field(description="Why it failed, when it did")


class PolicyRunPage(BaseModel):
    """One page of a policy's sweeps, newest first."""

    items: list[PolicyRunRead] = Field(description="The runs of this page")
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null on the last page")
