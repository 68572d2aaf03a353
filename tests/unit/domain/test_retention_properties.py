"""Property: whatever the positions, a planned cut never passes any consumer, the age limit or the high
watermark, and always moves the log start offset by at least min_records."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.domain.ports import TopicPartition
from app.domain.retention import (
    ClusterView,
    ConsumerSelection,
    PartitionOffsets,
    RetentionRules,
    plan_sweep,
)
from app.domain.topic_patterns import TopicSelector

PARTITIONS = [TopicPartition("t", p) for p in range(4)]
position = st.one_of(st.none(), st.integers(min_value=-1, max_value=120))


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[RetentionRules, ClusterView]:
    groups = draw(st.lists(st.sampled_from(["g1", "g2", "g3"]), min_size=1, unique=True))
    offsets = {}
    for tp in PARTITIONS:
        lso = draw(st.integers(0, 100))
        hw = draw(st.integers(lso, 110))
        young = draw(st.one_of(st.none(), st.integers(lso, hw)))
        offsets[tp] = PartitionOffsets(lso, hw, young)
    commits = {
        g: {tp: o for tp in PARTITIONS if (o := draw(position)) is not None} for g in ("g1", "g2", "g3")
    }
    rules = RetentionRules(
        TopicSelector(names=("t",)),
        ConsumerSelection(groups=tuple(groups)),
        min_records=draw(st.integers(0, 20)),
    )
    return rules, ClusterView(partitions=offsets, group_offsets=commits)


@given(scenarios())
def test_cut_is_always_safe(scenario: tuple[RetentionRules, ClusterView]) -> None:
    rules, view = scenario
    plan = plan_sweep(rules, view)
    assert set(plan.deletions) | set(plan.skipped) == set(PARTITIONS)
    assert not set(plan.deletions) & set(plan.skipped)
    for tp, cut in plan.deletions.items():
        info = view.partitions[tp]
        for group in rules.consumers.groups:
            assert view.group_offsets[group][tp] >= 0
            assert cut <= view.group_offsets[group][tp]
        assert cut <= info.high_watermark
        assert info.young_from is None or cut <= info.young_from
        assert cut - info.log_start_offset >= max(rules.min_records, 1)
