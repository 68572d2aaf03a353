"""Kafka Connect sink connectors as consumers (KIP-762): which group a sink commits under, which topics it
reads, and whether its state lets deletion go ahead.

A sink connector ``<name>`` commits its consumed offsets as consumer group ``connect-<name>`` unless its
config sets ``consumer.override.group.id``. It reads the topics listed in ``topics`` (comma-separated) or
every topic matching ``topics.regex`` (a whole-name match, as Java's ``Pattern.matcher().matches()``).
Deletion fails closed: a connector that is missing, not a sink, paused, failed or with a task that is not
RUNNING holds back every topic it reads; one whose topics are unknown holds back the whole sweep.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.domain.topic_patterns import TopicPatternError, compile_topic_pattern

GROUP_PREFIX = "connect-"
GROUP_OVERRIDE = "consumer.override.group.id"


class ConnectUnavailable(Exception):
    """The Connect REST API could not be read (unreachable, an error status, or an unreadable answer)."""


@dataclass(frozen=True)
class ConnectorState:
    """A connector as Connect's REST API describes it: type, config, and connector and task states."""

    name: str
    type: str
    config: Mapping[str, str]
    state: str
    task_states: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sink:
    """A running sink connector: its consumer group and the topics it reads."""

    connector: str
    group: str
    topics: frozenset[str]


@dataclass
class SinkReading:
    """The sinks a policy names, as found now: running ones, the topics held back by the others (topic ->
    why), and ``blocked`` when a connector's topics are unknown (the whole sweep is held back)."""

    sinks: list[Sink] = field(default_factory=list)
    held_topics: dict[str, str] = field(default_factory=dict)
    blocked: str | None = None


def sink_group(name: str, config: Mapping[str, str]) -> str:
    return config.get(GROUP_OVERRIDE) or f"{GROUP_PREFIX}{name}"


def sink_topics(config: Mapping[str, str], cluster_topics: Sequence[str]) -> frozenset[str]:
    """The topics a sink reads; raises ValueError for a ``topics.regex`` RE2 cannot run."""
    listed = config.get("topics", "")
    if listed.strip():
        return frozenset(t.strip() for t in listed.split(",") if t.strip())
    regex = config.get("topics.regex", "")
    if not regex:
        return frozenset()
    try:
        pattern = compile_topic_pattern(regex)
    except TopicPatternError as exc:
        raise ValueError(f"topics.regex {regex!r} cannot be matched here: {exc}") from None
    return frozenset(t for t in cluster_topics if pattern.matches(t))


def holdback(connector: ConnectorState) -> str | None:
    """Why the connector's topics may not be truncated now, or None when it and all its tasks run."""
    if connector.type != "sink":
        return f"connector {connector.name} is a {connector.type or 'unknown'} connector, not a sink"
    if connector.state != "RUNNING":
        return f"connector {connector.name} is {connector.state}"
    if not connector.task_states:
        return f"connector {connector.name} has no tasks"
    stopped = sorted({s for s in connector.task_states if s != "RUNNING"})
    if stopped:
        return f"connector {connector.name} has task(s) {', '.join(stopped)}"
    return None


def read_sinks(
    found: Mapping[str, ConnectorState], names: Sequence[str] | None, cluster_topics: Sequence[str]
) -> SinkReading:
    """The named connectors (``None``: every sink connector found) as sinks, or why they hold back."""
    reading = SinkReading()
    wanted = sorted(names) if names is not None else sorted(n for n, c in found.items() if c.type == "sink")
    for name in wanted:
        connector = found.get(name)
        if connector is None:
            reading.blocked = f"connector {name} is missing: the topics it reads are unknown"
            continue
        try:
            topics = sink_topics(connector.config, cluster_topics)
        except ValueError as exc:
            reading.blocked = f"connector {name}: {exc}"
            continue
        reason = holdback(connector)
        if reason is not None:
            for topic in topics:
                reading.held_topics.setdefault(topic, reason)
            continue
        reading.sinks.append(Sink(name, sink_group(name, connector.config), topics))
    return reading
