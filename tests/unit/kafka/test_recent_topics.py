"""What ``RecentTopics`` answers: only topics it knows all of, only while young enough, and nothing about a
topic a later answer no longer lists (nor its configs)."""

from __future__ import annotations

import time

from app.adapters.kafka.codecs.topic_metadata import Metadata, PartitionMetadata, TopicMetadata
from app.adapters.kafka.topics import RecentTopics

POLICY = ["cleanup.policy"]


def _metadata(**topics: int) -> Metadata:
    return Metadata(
        brokers=(1, 2, 3),
        topics={
            name: TopicMetadata("NONE", {p: PartitionMetadata(1, (1, 2, 3), "NONE") for p in range(count)})
            for name, count in topics.items()
        },
    )


def test_answers_only_when_every_topic_is_known_and_young() -> None:
    recent = RecentTopics(max_age_s=5.0)
    now = time.monotonic()
    recent.learn_metadata(now, ["orders", "payments"], _metadata(orders=3, payments=1))
    known = recent.metadata(["orders", "payments"])
    assert known is not None
    assert {name: len(t.partitions) for name, t in known.items()} == {"orders": 3, "payments": 1}
    assert recent.metadata(["orders", "refunds"]) is None
    recent.learn_metadata(now - 6.0, ["orders"], _metadata(orders=3))
    assert recent.metadata(["orders"]) is None
    assert recent.metadata(["payments"]) is not None


def test_a_topic_missing_or_failed_in_a_later_answer_is_forgotten_with_its_configs() -> None:
    recent = RecentTopics(max_age_s=5.0)
    now = time.monotonic()
    recent.learn_metadata(now, ["orders", "payments"], _metadata(orders=3, payments=1))
    recent.learn_configs(now, POLICY, {"orders": {"cleanup.policy": "delete"}, "payments": {}})
    assert recent.configs(["orders", "payments"], POLICY) == {
        "orders": {"cleanup.policy": "delete"},
        "payments": {},
    }
    failed = Metadata(brokers=(1,), topics={"payments": TopicMetadata("LEADER_NOT_AVAILABLE", {})})
    recent.learn_metadata(now, ["orders", "payments"], failed)
    assert recent.metadata(["orders"]) is None
    assert recent.metadata(["payments"]) is None
    assert recent.configs(["orders"], POLICY) is None
    assert recent.configs(["payments"], POLICY) is None


def test_configs_are_kept_per_set_of_names_and_age() -> None:
    recent = RecentTopics(max_age_s=5.0)
    recent.learn_configs(time.monotonic(), POLICY, {"orders": {"cleanup.policy": "delete"}})
    assert recent.configs(["orders"], ["cleanup.policy", "retention.ms"]) is None
    recent.learn_configs(time.monotonic() - 6.0, POLICY, {"orders": {"cleanup.policy": "delete"}})
    assert recent.configs(["orders"], POLICY) is None


def test_a_max_age_of_zero_never_answers() -> None:
    recent = RecentTopics(max_age_s=0.0)
    now = time.monotonic()
    recent.learn_metadata(now, ["orders"], _metadata(orders=1))
    recent.learn_configs(now, POLICY, {"orders": {}})
    assert recent.metadata(["orders"]) is None
    assert recent.configs(["orders"], POLICY) is None


def test_leaders_route_for_five_minutes_but_existence_only_for_the_max_age() -> None:
    recent = RecentTopics(max_age_s=5.0)
    recent.learn_metadata(time.monotonic() - 60.0, ["orders"], _metadata(orders=3))
    assert recent.metadata(["orders"]) is None
    routes = recent.routes(["orders"])
    assert routes is not None
    assert len(routes["orders"].partitions) == 3
    assert recent.routes(["orders", "refunds"]) is None
    recent.learn_metadata(time.monotonic() - 301.0, ["orders"], _metadata(orders=3))
    assert recent.routes(["orders"]) is None
    off = RecentTopics(max_age_s=0.0)
    off.learn_metadata(time.monotonic(), ["orders"], _metadata(orders=3))
    assert off.routes(["orders"]) is None
