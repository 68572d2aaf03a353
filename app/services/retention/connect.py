"""Kafka Connect sinks of a retention policy, read from the Connect cluster's REST API at each sweep.

A policy's ``consumers.connect`` names a Connect cluster of ``PURGE_CONNECT`` and its sink connectors (or
``all_sinks``); each running sink bounds the topics it reads with its consumer group's committed offsets
(``app.domain.connect``). Connect that cannot be read raises ``ConnectUnavailable``: the sweep deletes
nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.adapters.connect import read_connectors
from app.domain.connect import ConnectUnavailable, SinkReading, read_sinks
from app.services.runtime import Runtime


async def policy_sinks(
    runtime: Runtime, consumers: Mapping[str, Any], cluster_topics: Sequence[str]
) -> SinkReading | None:
    """The sinks the stored ``consumers`` name (None without Connect consumers); raises
    ``ConnectUnavailable`` when the Connect cluster is not configured or cannot be read."""
    chosen = consumers.get("connect")
    if chosen is None:
        return None
    settings = runtime.settings.connect.get(chosen["cluster"])
    if settings is None:
        raise ConnectUnavailable(f"Kafka Connect cluster {chosen['cluster']!r} is not configured")
    found = await read_connectors(settings)
    names = None if chosen["connectors"] == "all_sinks" else list(chosen["connectors"])
    return read_sinks(found, names, cluster_topics)


def connector_topics(reading: SinkReading) -> set[str]:
    """Every topic the sinks read, running or held back."""
    return {topic for sink in reading.sinks for topic in sink.topics} | set(reading.held_topics)
