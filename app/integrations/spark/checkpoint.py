"""Read the offsets a Spark Structured Streaming query has consumed, from its checkpoint, without Spark.

A checkpoint holds two logs. ``offsets/<N>`` is written *before* batch N runs: a version line (``v1``), a
metadata JSON line, then one line per source in plan order, each the source's end offset as JSON or
``-`` when the source had no offset yet. ``commits/<N>`` is written *after* the sink committed batch N.
So the consumed offsets are ``offsets/<N>`` for the highest N that has ``commits/<N>``; a higher
``offsets/<M>`` without a commit is a batch in flight and is ignored.

Kafka-style sources write ``{"topic": {"0": 100, "1": 42}}`` (Spark's Kafka source compactly, Python
sources with ``json.dumps`` spacing): lines are parsed as JSON, never compared as strings. Local paths and
``file://`` URLs are read directly; other URLs (``s3://``, ``hdfs://``, ...) need fsspec installed. The
service only ever passes locations admitted by ``checkpoint_roots`` (under the configured roots, real
path resolved just before the read).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlparse

TopicOffsets = dict[str, dict[int, int]]
SUPPORTED_VERSIONS = frozenset({1, 2})


class CheckpointError(Exception):
    """The checkpoint cannot be read or does not look like a Structured Streaming checkpoint."""


@dataclass(frozen=True)
class CommittedOffsets:
    """What a query's checkpoint says it has consumed.

    ``batch_id`` is the newest committed batch (None: nothing committed yet). ``sources`` has one entry per
    source of the query, None for a source without an offset (``-``) or one whose offset is not a Kafka
    ``{topic: {partition: offset}}`` map. ``in_flight`` lists batches planned but not committed.
    """

    batch_id: int | None
    sources: tuple[TopicOffsets | None, ...] = ()
    in_flight: tuple[int, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def topic_offsets(self) -> TopicOffsets:
        """Offsets per topic and partition; a partition read by two sources keeps the lower offset."""
        merged: TopicOffsets = {}
        for source in self.sources:
            for topic, partitions in (source or {}).items():
                target = merged.setdefault(topic, {})
                for partition, offset in partitions.items():
                    target[partition] = min(offset, target.get(partition, offset))
        return merged


class _Storage(Protocol):
    def list_names(self, folder: str) -> list[str]: ...

    def read_text(self, folder: str, name: str) -> str: ...


class _LocalStorage:
    def __init__(self, root: Path) -> None:
        self._root = root

    def list_names(self, folder: str) -> list[str]:
        path = self._root / folder
        return [p.name for p in path.iterdir()] if path.is_dir() else []

    def read_text(self, folder: str, name: str) -> str:
        return (self._root / folder / name).read_text(encoding="utf-8")


class _FsspecStorage:
    def __init__(self, url: str) -> None:
        try:
            import fsspec
        except ImportError as exc:
            raise CheckpointError(f"reading {url!r} needs fsspec (pip install fsspec)") from exc
        self._fs, self._root = fsspec.core.url_to_fs(url)

    def list_names(self, folder: str) -> list[str]:
        path = f"{self._root.rstrip('/')}/{folder}"
        if not self._fs.isdir(path):
            return []
        return [str(entry).rstrip("/").rsplit("/", 1)[-1] for entry in self._fs.ls(path, detail=False)]

    def read_text(self, folder: str, name: str) -> str:
        with self._fs.open(f"{self._root.rstrip('/')}/{folder}/{name}", "rt", encoding="utf-8") as handle:
            return str(handle.read())


def _storage(location: str) -> _Storage:
    parsed = urlparse(location)
    if parsed.scheme == "file":
        return _LocalStorage(Path(unquote(parsed.path)))
    if len(parsed.scheme) > 1:  # one letter is a Windows drive, not a scheme
        return _FsspecStorage(location)
    return _LocalStorage(Path(location))


def batch_ids(names: Sequence[str]) -> list[int]:
    """Batch numbers among a log folder's file names (checksum and temporary files are skipped)."""
    return sorted(int(name) for name in names if name.isdigit())


def parse_source_offset(line: str) -> TopicOffsets | None:
    """One source line of an offsets file: a Kafka offset map, or None (``-`` or another kind of source)."""
    text = line.strip()
    if text == "-":
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"source offset is not JSON: {text[:80]!r}") from exc
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        return None
    offsets: TopicOffsets = {}
    for topic, partitions in value.items():
        parsed: dict[int, int] = {}
        for partition, offset in partitions.items():
            if not str(partition).lstrip("-").isdigit() or type(offset) is not int:
                return None
            parsed[int(partition)] = offset
        offsets[str(topic)] = parsed
    return offsets


def parse_offsets_file(text: str) -> tuple[dict[str, Any], tuple[TopicOffsets | None, ...]]:
    """(metadata, one entry per source) of an ``offsets/<N>`` file."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("v") or not lines[0][1:].isdigit():
        raise CheckpointError("offsets file does not start with a version line")
    if int(lines[0][1:]) not in SUPPORTED_VERSIONS:
        raise CheckpointError(f"offsets log version {lines[0]} is not supported")
    if len(lines) < 2:
        raise CheckpointError("offsets file has no metadata line")
    try:
        metadata = json.loads(lines[1])
    except json.JSONDecodeError as exc:
        raise CheckpointError("offsets metadata is not JSON") from exc
    return (metadata if isinstance(metadata, dict) else {}), tuple(
        parse_source_offset(line) for line in lines[2:] if line.strip()
    )


def read_committed_offsets(location: str) -> CommittedOffsets:
    """The offsets of the newest committed batch of the query checkpointed at ``location``."""
    storage = _storage(location)
    try:
        planned = batch_ids(storage.list_names("offsets"))
        committed = batch_ids(storage.list_names("commits"))
    except OSError as exc:
        raise CheckpointError(f"cannot list checkpoint {location!r}: {exc}") from exc
    if not planned and not committed:
        if not storage.list_names(""):
            raise CheckpointError(f"no checkpoint at {location!r}")
        return CommittedOffsets(batch_id=None)
    newest = committed[-1] if committed else None
    in_flight = tuple(n for n in planned if newest is None or n > newest)
    if newest is None:
        return CommittedOffsets(batch_id=None, in_flight=in_flight)
    if newest not in planned:
        raise CheckpointError(f"commits/{newest} exists without offsets/{newest}")
    try:
        metadata, sources = parse_offsets_file(storage.read_text("offsets", str(newest)))
    except OSError as exc:
        raise CheckpointError(f"cannot read offsets/{newest}: {exc}") from exc
    return CommittedOffsets(batch_id=newest, sources=sources, in_flight=in_flight, metadata=metadata)
