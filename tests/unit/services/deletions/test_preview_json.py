"""The preview's partitions written as JSON text directly are byte for byte what canonical_json makes
of the same content, and valid as the response model's partitions: names with quotes, backslashes,
control and non-ASCII characters, time cuts with and without sampled records, no groups and many."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from app.audit import canonical_json
from app.domain.deletion_requests import GroupImpact, PartitionImpact, uncommitted
from app.domain.offsets import OffsetSpec, PlannedCut
from app.domain.ports import TimeOffset, TopicPartition
from app.schemas.inspection import PartitionPreview
from app.services.deletions.assessment import Assessment
from app.services.deletions.plan import Plan
from app.services.deletions.preview import _cut_time, _object_json, _partitions_json

NAMES = ["billing", 'quo"te', "back\\slash", "tab\there", "grüße-日本", "emoji-\U0001f600", "ctl-\x01"]


def _preview() -> tuple[Plan, Assessment, dict[TopicPartition, list[tuple[int, int]]]]:
    cuts, impacts, times, samples = [], [], {}, {}
    specs: list[dict[str, object]] = [{"offset": 5}, {"before": "2026-11-20T00:00:00Z", "before_ms": 9}]
    for i, topic in enumerate(NAMES):
        for partition in range(3):
            tp = TopicPartition(topic, partition)
            timed = (i + partition) % 2 == 1
            spec = OffsetSpec(before_ms=1_700_000_000_000) if timed else OffsetSpec(offset=5)
            cuts.append(PlannedCut(1 if timed else 0, tp, spec))
            times[tp] = TimeOffset(offset=4 if partition else -1, timestamp=1_700_000_000_123)
            if partition == 2:
                samples[tp] = [(3, 1_699_999_999_000), (4, 1_700_000_000_500)]
            groups = tuple(
                GroupImpact(name, partition, 5 - partition, "Empty", False) for name in NAMES[: i + partition]
            )
            outcome = "NONE" if partition else "POLICY_VIOLATION"
            impacts.append(PartitionImpact(tp, 5, 0, 20, 5 if partition else 0, outcome, groups))
    plan = Plan(cuts, {}, specs, {}, times, {})
    # Open transactions: the last stable offset below the cut (uncommitted records go), at the log start
    # offset, or unknown (the high watermark).
    last_stable = {impact.partition: (3, 0)[i % 2] for i, impact in enumerate(impacts) if i % 3}
    return plan, Assessment(impacts, {}, last_stable), samples


def _as_dicts(plan: Plan, assessment: Assessment, samples: Any) -> list[dict[str, Any]]:
    return [
        {
            "topic": impact.partition.topic,
            "partition": impact.partition.partition,
            "spec": plan.specs[cut.entry],
            "resolved_offset": impact.resolved_offset,
            "log_start_offset": impact.log_start_offset,
            "high_watermark": impact.high_watermark,
            "last_stable_offset": assessment.last_stable.get(impact.partition, impact.high_watermark),
            "records_deleted": impact.records_deleted,
            "uncommitted_records": uncommitted(
                impact, assessment.last_stable.get(impact.partition, impact.high_watermark)
            ),
            "predicted_outcome": impact.predicted_outcome,
            "unconsumed_groups": [
                {"group": g.group, "committed_offset": g.committed_offset, "unread_records": g.unread_records}
                for g in impact.groups
            ],
            "cut_time": _cut_time(plan, impact, cut.spec.before_ms, samples),
        }
        for cut, impact in zip(plan.cuts, assessment.impacts, strict=True)
    ]


def test_partitions_text_is_canonical_json() -> None:
    plan, assessment, samples = _preview()
    assert _partitions_json(plan, assessment, samples) == canonical_json(_as_dicts(plan, assessment, samples))


def test_partitions_text_is_the_response_models_partitions() -> None:
    plan, assessment, samples = _preview()
    text = _partitions_json(plan, assessment, samples)
    partitions = TypeAdapter(list[PartitionPreview]).validate_json(text)
    assert [p.model_dump(mode="json") for p in partitions] == _as_dicts(plan, assessment, samples)


def test_object_from_encoded_members_is_canonical_json() -> None:
    content: dict[str, Any] = {name: [i, {"b": name, "a": None}] for i, name in enumerate(NAMES)}
    content["partition_count"] = 3
    members = {key: canonical_json(value) for key, value in content.items()}
    assert _object_json(members) == canonical_json(content)
