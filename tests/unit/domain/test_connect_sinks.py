"""Kafka Connect sinks as consumers: group ids, topics, and the states that hold deletion back."""

from __future__ import annotations

import pytest

from app.domain.connect import ConnectorState, holdback, read_sinks, sink_group, sink_topics

TOPICS = ["orders", "orders.eu", "payments"]


def connector(
    name: str, state: str = "RUNNING", tasks: tuple[str, ...] = ("RUNNING",), **config: str
) -> ConnectorState:
    return ConnectorState(name, "sink", config, state, tasks)


def test_group_is_connect_name_unless_overridden() -> None:
    assert sink_group("s3", {}) == "connect-s3"
    assert sink_group("s3", {"consumer.override.group.id": "lake"}) == "lake"


def test_topics_from_list_or_regex() -> None:
    assert sink_topics({"topics": " orders , payments,"}, TOPICS) == {"orders", "payments"}
    assert sink_topics({"topics.regex": r"orders(\..*)?"}, TOPICS) == {"orders", "orders.eu"}
    assert sink_topics({}, TOPICS) == frozenset()
    with pytest.raises(ValueError, match=r"topics\.regex"):
        sink_topics({"topics.regex": "(a)\\1"}, TOPICS)


@pytest.mark.parametrize(
    ("state", "tasks", "reason"),
    [
        ("RUNNING", ("RUNNING", "RUNNING"), None),
        ("PAUSED", ("PAUSED",), "connector s3 is PAUSED"),
        ("UNASSIGNED", (), "connector s3 is UNASSIGNED"),
        ("RUNNING", (), "connector s3 has no tasks"),
        ("RUNNING", ("RUNNING", "UNASSIGNED"), "connector s3 has task(s) UNASSIGNED"),
    ],
)
def test_holdback(state: str, tasks: tuple[str, ...], reason: str | None) -> None:
    assert holdback(connector("s3", state, tasks)) == reason


def test_a_source_connector_is_no_sink() -> None:
    source = ConnectorState("cdc", "source", {}, "RUNNING", ("RUNNING",))
    assert holdback(source) == "connector cdc is a source connector, not a sink"
    assert read_sinks({"cdc": source}, None, TOPICS).sinks == []


def test_read_sinks() -> None:
    found = {
        "s3": connector("s3", topics="orders"),
        "es": connector("es", "PAUSED", topics="payments"),
    }
    reading = read_sinks(found, None, TOPICS)
    assert [(s.connector, s.group, s.topics) for s in reading.sinks] == [("s3", "connect-s3", {"orders"})]
    assert reading.held_topics == {"payments": "connector es is PAUSED"}
    assert reading.blocked is None
    assert read_sinks(found, ["s3", "gone"], TOPICS).blocked == (
        "connector gone is missing: the topics it reads are unknown"
    )
