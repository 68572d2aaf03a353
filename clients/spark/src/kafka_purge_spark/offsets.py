"""Kafka offsets as Spark's Kafka source writes them: ``{"topic": {"0": 100, "1": 42}}``, the next offset
to read per partition. Any other shape (a file source's ``{"logOffset": 3}``, a rate source's ``42``) is
not a Kafka source and yields None; ``unreadable`` says why a query's sources give no Kafka offsets."""

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


def _field(source: Any, name: str) -> Any:
    return source.get(name) if isinstance(source, Mapping) else getattr(source, name, None)


def end_offsets(sources: Iterable[Any]) -> TopicOffsets:
    """Merged Kafka ``endOffset`` of every source of one progress event (JSON text in PySpark's progress
    objects, an object in the progress JSON); a partition read by two sources keeps the lower offset."""
    merged: TopicOffsets = {}
    for source in sources:
        for topic, partitions in (kafka_offsets(_field(source, "endOffset")) or {}).items():
            target = merged.setdefault(topic, {})
            for partition, offset in partitions.items():
                target[partition] = min(offset, target.get(partition, offset))
    return merged


def unreadable(sources: Iterable[Any]) -> str | None:
    """Why the listener cannot report a query whose progress names these sources, or None when it can (or
    cannot tell yet: no source has an end offset before a query's first batch).

    Spark's Kafka source describes itself as ``KafkaV2[Subscribe[orders]]`` (``KafkaSourceV1[...]`` on the
    v1 path); any other source (rate, files, a Delta table) has nothing kafka-purge can delete.
    """
    # PySpark's progress objects turn a missing end offset into the text "None".
    seen = [
        (str(_field(s, "description") or "?"), None if offset in ("None", "null") else offset)
        for s in sources
        for offset in [_field(s, "endOffset")]
    ]
    if all(offset is None for _, offset in seen):
        return None
    for description, offset in seen:
        if description.startswith("Kafka") and offset is not None and kafka_offsets(offset) is None:
            return f"cannot read the offsets of its Kafka source {description}: {str(offset)[:200]}"
    if any(kafka_offsets(offset) is not None for _, offset in seen if offset is not None):
        return None
    names = ", ".join(description for description, _ in seen)
    return f"reads no Kafka source ({names})"
