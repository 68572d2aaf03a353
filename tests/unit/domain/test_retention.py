"""The consumed-retention planner: safe offsets and every reason to leave a partition alone."""

from __future__ import annotations

import pytest

from app.domain.ports import GroupInfo, GroupMember, TopicPartition
from app.domain.retention import (
    ClusterView,
    ConsumerSelection,
    PartitionOffsets,
    RetentionRules,
    SkipReason,
    plan_sweep,
)
from app.domain.topic_patterns import TopicSelector

T0, T1 = TopicPartition("inter.a", 0), TopicPartition("inter.a", 1)


def rules(
    *,
    groups: tuple[str, ...] = ("billing",),
    spark: tuple[str, ...] = (),
    all_groups: bool = False,
    **kw: int,
) -> RetentionRules:
    return RetentionRules(TopicSelector(prefix="inter."), ConsumerSelection(groups, spark, all_groups), **kw)


def group(
    name: str, state: str = "Stable", topics: tuple[str, ...] | None = (), protocol: str = "consumer"
) -> GroupInfo:
    """A group; ``topics=None`` is a member whose subscription did not decode, ``()`` one with no member."""
    if topics == ():
        return GroupInfo(name, state, protocol, ())
    member = GroupMember("m-1", "client", "/127.0.0.1", tuple(topics or ()), ())
    return GroupInfo(name, state, protocol, (member,))


def offsets(lso: int = 0, hw: int = 100, young_from: int | None = None) -> PartitionOffsets:
    return PartitionOffsets(log_start_offset=lso, high_watermark=hw, young_from=young_from)


def test_safe_offset_is_the_minimum_over_groups_and_spark_consumers() -> None:
    view = ClusterView(
        partitions={T0: offsets(), T1: offsets(lso=10)},
        group_offsets={"billing": {T0: 40, T1: 90}, "audit": {T0: 70, T1: 30}},
        spark_offsets={"enricher": {T0: 55, T1: 80}},
    )
    plan = plan_sweep(rules(groups=("billing", "audit"), spark=("enricher",)), view)
    assert plan.deletions == {T0: 40, T1: 30}
    assert plan.skipped == {}


def test_a_consumer_without_a_commit_on_a_partition_blocks_only_that_partition() -> None:
    view = ClusterView(
        partitions={T0: offsets(), T1: offsets()},
        group_offsets={"billing": {T0: 40}},
        spark_offsets={"enricher": {T0: 50, T1: 60}},
    )
    plan = plan_sweep(rules(spark=("enricher",)), view)
    assert plan.deletions == {T0: 40}
    assert plan.skipped[T1].reason is SkipReason.CONSUMER_WITHOUT_POSITION
    assert "group:billing" in plan.skipped[T1].detail


def test_committed_offset_minus_one_means_no_position() -> None:
    view = ClusterView(partitions={T0: offsets()}, group_offsets={"billing": {T0: -1}})
    assert plan_sweep(rules(), view).skipped[T0].reason is SkipReason.CONSUMER_WITHOUT_POSITION


def test_spark_consumer_that_never_reported_blocks_deletion() -> None:
    view = ClusterView(partitions={T0: offsets()}, group_offsets={"billing": {T0: 40}})
    plan = plan_sweep(rules(spark=("enricher",)), view)
    assert plan.skipped[T0].reason is SkipReason.CONSUMER_WITHOUT_POSITION
    assert "spark:enricher" in plan.skipped[T0].detail


def test_failed_offset_query_of_a_required_group_fails_closed() -> None:
    view = ClusterView(
        partitions={T0: offsets()},
        group_offsets={"billing": {T0: 40}},
        failed_consumers={"group:billing": "COORDINATOR_NOT_AVAILABLE"},
    )
    plan = plan_sweep(rules(), view)
    assert plan.deletions == {}
    assert plan.skipped[T0].reason is SkipReason.OFFSET_QUERY_FAILED


def test_failure_of_an_unrelated_group_does_not_matter_with_named_groups() -> None:
    view = ClusterView(
        partitions={T0: offsets()},
        group_offsets={"billing": {T0: 40}},
        failed_consumers={"group:other": "NOT_COORDINATOR"},
    )
    assert plan_sweep(rules(), view).deletions == {T0: 40}


def test_failed_partition_offsets_are_skipped() -> None:
    view = ClusterView(
        partitions={T0: offsets()},
        failed_partitions={T1: "LEADER_NOT_AVAILABLE"},
        group_offsets={"billing": {T0: 40, T1: 40}},
    )
    plan = plan_sweep(rules(), view)
    assert plan.deletions == {T0: 40}
    assert plan.skipped[T1].reason is SkipReason.OFFSET_QUERY_FAILED


@pytest.mark.parametrize(
    ("lso", "position", "min_records", "expected"),
    [
        (40, 40, 1, SkipReason.NOTHING_TO_DELETE),
        (50, 40, 1, SkipReason.NOTHING_TO_DELETE),
        (30, 40, 11, SkipReason.BELOW_MIN_RECORDS),
        (30, 40, 10, None),
        (39, 40, 0, None),
    ],
)
def test_min_records(lso: int, position: int, min_records: int, expected: SkipReason | None) -> None:
    view = ClusterView(partitions={T0: offsets(lso=lso)}, group_offsets={"billing": {T0: position}})
    plan = plan_sweep(rules(min_records=min_records), view)
    if expected is None:
        assert plan.deletions == {T0: position}
    else:
        assert plan.skipped[T0].reason is expected


def test_min_age_keeps_records_younger_than_the_limit() -> None:
    view = ClusterView(
        partitions={T0: offsets(young_from=25), T1: offsets(lso=20, young_from=22)},
        group_offsets={"billing": {T0: 40, T1: 40}},
    )
    plan = plan_sweep(rules(min_age_seconds=3600, min_records=5), view)
    assert plan.deletions == {T0: 25}
    assert plan.skipped[T1].reason is SkipReason.RECORDS_TOO_YOUNG


def test_min_age_with_every_record_older_is_bounded_by_consumers_only() -> None:
    view = ClusterView(partitions={T0: offsets(young_from=100)}, group_offsets={"billing": {T0: 40}})
    assert plan_sweep(rules(min_age_seconds=60), view).deletions == {T0: 40}


def test_position_beyond_the_high_watermark_is_suspicious() -> None:
    view = ClusterView(partitions={T0: offsets(hw=30)}, group_offsets={"billing": {T0: 40}})
    assert plan_sweep(rules(), view).skipped[T0].reason is SkipReason.POSITION_BEYOND_HIGH_WATERMARK


def test_position_equal_to_the_high_watermark_deletes_everything() -> None:
    view = ClusterView(partitions={T0: offsets(hw=40)}, group_offsets={"billing": {T0: 40}})
    assert plan_sweep(rules(), view).deletions == {T0: 40}


def test_all_groups_uses_every_group_with_commits_on_the_topic() -> None:
    view = ClusterView(
        partitions={T0: offsets(), T1: offsets()},
        group_offsets={
            "a": {T0: 50, T1: 60},
            "b": {T0: 30, T1: 70},
            "c": {TopicPartition("elsewhere", 0): 1},
            "spark-kafka-source-123-driver-0": {T0: 5, T1: 5},
        },
        groups=[
            group("a", "Empty"),
            group("b", topics=("inter.a",)),
        ],
    )
    plan = plan_sweep(rules(groups=(), all_groups=True), view)
    assert plan.deletions == {T0: 30, T1: 60}


def test_all_groups_skips_a_topic_read_by_an_active_group_without_commits() -> None:
    view = ClusterView(
        partitions={T0: offsets(), TopicPartition("inter.b", 0): offsets()},
        group_offsets={"a": {T0: 50, TopicPartition("inter.b", 0): 50}},
        groups=[group("newcomer", topics=("inter.a",))],
    )
    plan = plan_sweep(rules(groups=(), all_groups=True), view)
    assert plan.skipped[T0].reason is SkipReason.FOREIGN_ACTIVE_GROUP
    assert plan.deletions == {TopicPartition("inter.b", 0): 50}
    assert any("newcomer" in warning for warning in plan.warnings)


def test_all_groups_treats_an_active_spark_source_group_as_foreign() -> None:
    view = ClusterView(
        partitions={T0: offsets()},
        group_offsets={"a": {T0: 50}, "spark-kafka-source-x-driver-0": {T0: 90}},
        groups=[group("spark-kafka-source-x-driver-0", topics=("inter.a",))],
    )
    assert (
        plan_sweep(rules(groups=(), all_groups=True), view).skipped[T0].reason
        is SkipReason.FOREIGN_ACTIVE_GROUP
    )


def test_all_groups_ignores_inactive_and_non_consumer_groups() -> None:
    view = ClusterView(
        partitions={T0: offsets()},
        group_offsets={"a": {T0: 50}},
        groups=[
            group("gone", "Empty"),
            group("connect-cluster", topics=None, protocol="connect"),
            group("reads-other", topics=("other",)),
        ],
    )
    assert plan_sweep(rules(groups=(), all_groups=True), view).deletions == {T0: 50}


def test_a_rebalancing_group_may_read_anything() -> None:
    view = ClusterView(
        partitions={T0: offsets()},
        group_offsets={"a": {T0: 50}},
        groups=[group("moving", "PreparingRebalance", topics=("other",))],
    )
    assert (
        plan_sweep(rules(groups=(), all_groups=True), view).skipped[T0].reason
        is SkipReason.FOREIGN_ACTIVE_GROUP
    )


def test_all_groups_with_unknown_assignment_is_foreign() -> None:
    view = ClusterView(
        partitions={T0: offsets()},
        group_offsets={"a": {T0: 50}},
        groups=[group("opaque", topics=None)],
    )
    assert (
        plan_sweep(rules(groups=(), all_groups=True), view).skipped[T0].reason
        is SkipReason.FOREIGN_ACTIVE_GROUP
    )


def test_all_groups_without_any_commit_never_deletes() -> None:
    view = ClusterView(partitions={T0: offsets()}, group_offsets={"spark-kafka-source-1-driver-0": {T0: 90}})
    assert plan_sweep(rules(groups=(), all_groups=True), view).skipped[T0].reason is SkipReason.NO_CONSUMERS


def test_all_groups_fails_closed_when_any_group_could_not_be_read() -> None:
    view = ClusterView(
        partitions={T0: offsets()},
        group_offsets={"a": {T0: 50}},
        failed_consumers={"group:*": "ListGroups failed on broker 2"},
    )
    assert (
        plan_sweep(rules(groups=(), all_groups=True), view).skipped[T0].reason
        is SkipReason.OFFSET_QUERY_FAILED
    )


def test_all_groups_also_waits_for_listed_spark_consumers() -> None:
    view = ClusterView(
        partitions={T0: offsets()}, group_offsets={"a": {T0: 50}}, spark_offsets={"enricher": {T0: 20}}
    )
    assert plan_sweep(rules(groups=(), spark=("enricher",), all_groups=True), view).deletions == {T0: 20}


def test_skip_counts_summarise_reasons() -> None:
    view = ClusterView(partitions={T0: offsets(), T1: offsets(lso=40)}, group_offsets={"billing": {T1: 40}})
    assert plan_sweep(rules(), view).skip_counts() == {"consumer_without_position": 1, "nothing_to_delete": 1}


@pytest.mark.parametrize(
    ("selector", "topic", "matches"),
    [
        (TopicSelector(prefix="inter."), "inter.x", True),
        (TopicSelector(prefix="inter."), "interx", False),
        (TopicSelector(regex=r"inter\.[a-z]+"), "inter.abc", True),
        (TopicSelector(regex=r"inter\.[a-z]+"), "inter.abc1", False),
        (TopicSelector(names=("a", "b")), "b", True),
        (TopicSelector(names=("a", "b")), "c", False),
    ],
)
def test_topic_selectors(selector: TopicSelector, topic: str, matches: bool) -> None:
    assert selector.matches(topic) is matches


def test_a_selector_has_exactly_one_form() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        TopicSelector(prefix="a", names=("b",))
    with pytest.raises(ValueError, match="exactly one"):
        TopicSelector()
