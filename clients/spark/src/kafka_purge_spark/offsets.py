"""Kafka offsets as Spark's Kafka source writes them: ``{"topic": {"0": 100, "1": 42}}``, the next offset
to read per partition. Any other shape (a file source's ``{"logOffset": 3}``, a rate source's ``42``) is
not a Kafka source and yields None."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

TopicOffsets = dict[str, dict[int, int]]


def kafka_offsets(raw: Any) -> TopicOffsets | None:
    """A source offset (JSON text or already parsed) as a Kafka offset map, or None for any other shape."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return None
    if not isinstance(raw, Mapping) or not all(isinstance(v, Mapping) for v in raw.values()):
        return None
    offsets: TopicOffsets = {}
    for topic, partitions in raw.items():
        parsed: dict[int, int] = {}
        for partition, offset in partitions.items():
            if not str(partition).lstrip("-").isdigit() or type(offset) is not int:
                return None
            parsed[int(partition)] = offset
        offsets[str(topic)] = parsed
    return offsets


def end_offsets(sources: Iterable[Any]) -> TopicOffsets:
    """Merged Kafka ``endOffset`` of every source of one progress event (JSON text in PySpark's progress
    objects, an object in the progress JSON); a partition read by two sources keeps the lower offset."""
    merged: TopicOffsets = {}
    for source in sources:
        raw = source.get("endOffset") if isinstance(source, Mapping) else getattr(source, "endOffset", None)
        for topic, partitions in (kafka_offsets(raw) or {}).items():
            target = merged.setdefault(topic, {})
            for partition, offset in partitions.items():
                target[partition] = min(offset, target.get(partition, offset))
    return merged
