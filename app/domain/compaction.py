"""When Kafka's log cleaner removes a key's records after its tombstone, read off the topic's configs.

A tombstone (the key with a null value) removes the key's earlier records only once the log cleaner has
cleaned past it, and Kafka's cleaner (``LogCleanerManager``) never cleans:

- the active segment: the tombstone's segment must roll first, and a segment rolls only when a record is
  appended to it, once that record's timestamp is ``max.segment.ms`` past the segment's first record's
  (``segment.ms``, or ``max.compaction.lag.ms`` when smaller, less up to ``segment.jitter.ms``) or the
  segment would outgrow ``segment.bytes``. On a partition nobody writes to, the tombstone's segment never
  rolls, whatever the configs say; the erasure itself appends a second tombstone of the key once the roll
  time has passed (a duplicate delete of a key already deleted), so the first one's segment rolls;
- a segment whose newest record is younger than ``min.compaction.lag.ms``;
- past the last stable offset (an open transaction holds it back).

Among the partitions it may clean, the cleaner picks one only when its uncleaned share of bytes is above
``min.cleanable.dirty.ratio`` or its oldest uncleaned segment began more than ``max.compaction.lag.ms``
ago. With Kafka's default ``max.compaction.lag.ms`` (``Long.MAX_VALUE``) only the ratio can start it, and
how fast a partition gets dirty depends on its traffic: a quiet partition may never be cleaned. A cleaner
thread that found nothing sleeps ``log.cleaner.backoff.ms`` (a broker config, 15 s by default) before it
looks again. Once cleaned, the tombstone itself stays ``delete.retention.ms`` more, so that consumers
reading behind see the delete.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

NEVER_MS = 2**63 - 1  # Long.MAX_VALUE, Kafka's "no limit"
CLEANER_BACKOFF_MS = 15_000

DEFAULTS = {
    "cleanup.policy": "delete",
    "segment.ms": "604800000",
    "segment.bytes": "1073741824",
    "segment.jitter.ms": "0",
    "min.compaction.lag.ms": "0",
    "max.compaction.lag.ms": str(NEVER_MS),
    "min.cleanable.dirty.ratio": "0.5",
    "delete.retention.ms": "86400000",
}


@dataclass(frozen=True)
class CompactionConfig:
    """The topic configs that decide when the cleaner removes a record (Kafka's names, in milliseconds)."""

    cleanup_policy: frozenset[str]
    segment_ms: int
    segment_bytes: int
    segment_jitter_ms: int
    min_compaction_lag_ms: int
    max_compaction_lag_ms: int
    min_cleanable_dirty_ratio: float
    delete_retention_ms: int

    @classmethod
    def of(cls, configs: Mapping[str, str]) -> CompactionConfig:
        """From a topic's DescribeConfigs answer; a config it does not list takes Kafka's default."""
        value = {**DEFAULTS, **configs}
        return cls(
            cleanup_policy=frozenset(p.strip() for p in value["cleanup.policy"].split(",") if p.strip()),
            segment_ms=int(value["segment.ms"]),
            segment_bytes=int(value["segment.bytes"]),
            segment_jitter_ms=int(value["segment.jitter.ms"]),
            min_compaction_lag_ms=int(value["min.compaction.lag.ms"]),
            max_compaction_lag_ms=int(value["max.compaction.lag.ms"]),
            min_cleanable_dirty_ratio=float(value["min.cleanable.dirty.ratio"]),
            delete_retention_ms=int(value["delete.retention.ms"]),
        )

    @property
    def compacted(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def max_segment_ms(self) -> int:
        """How long a segment stays active at most (``LogConfig.maxSegmentMs``)."""
        if self.compacted and self.max_compaction_lag_ms > 0:
            return min(self.max_compaction_lag_ms, self.segment_ms)
        return self.segment_ms

    @property
    def compaction_forced(self) -> bool:
        return self.max_compaction_lag_ms < NEVER_MS


class Outlook(StrEnum):
    """How sure the forecast is that the key's records go."""

    BOUNDED = "bounded"  # max.compaction.lag.ms forces a clean by a time the forecast names
    TRAFFIC = "traffic"  # only the dirty ratio starts a clean: when depends on what else is written
    NOT_COMPACTED = "not_compacted"  # the topic's cleanup.policy has no ``compact``


@dataclass(frozen=True)
class Forecast:
    """When the cleaner removes the records of a key tombstoned at ``tombstoned_at``.

    ``roll_at``: from then on, one more record in the partition rolls the tombstone's segment (the
    erasure's second tombstone, if nobody else writes). ``compacted_by``: the latest time the records are
    gone if that record came at ``roll_at`` and the broker's cleaner is not busy with other partitions
    (None unless ``BOUNDED``). ``tombstone_removed_by``: the same for the tombstone itself.
    """

    outlook: Outlook
    roll_at: datetime | None
    compacted_by: datetime | None
    tombstone_removed_by: datetime | None


def _ms(milliseconds: int) -> timedelta:
    return timedelta(milliseconds=milliseconds)


def forecast(
    config: CompactionConfig,
    tombstoned_at: datetime,
    appended_at: datetime | None = None,
    cleaner_backoff_ms: int = CLEANER_BACKOFF_MS,
) -> Forecast:
    """``appended_at``: when a record was appended to the partition after ``roll_at`` (rolling the
    tombstone's segment), if one was; without it the forecast counts on one at ``roll_at``."""
    if not config.compacted:
        return Forecast(Outlook.NOT_COMPACTED, None, None, None)
    # The segment's first record is no younger than the tombstone, so it can roll by then at the latest.
    roll_at = tombstoned_at + _ms(config.max_segment_ms)
    if not config.compaction_forced:
        return Forecast(Outlook.TRAFFIC, roll_at, None, None)
    rolled_at = max(roll_at, appended_at) if appended_at is not None else roll_at
    # The rolled segment's newest record is at most that old, and the oldest uncleaned segment began no
    # later than the tombstone.
    cleanable_at = rolled_at + _ms(config.min_compaction_lag_ms)
    forced_at = tombstoned_at + _ms(config.max_compaction_lag_ms)
    compacted_by = max(cleanable_at, forced_at) + _ms(cleaner_backoff_ms)
    # The clean that keeps the tombstone starts its delete.retention.ms; a later clean, which needs the
    # segment after it to roll as well, drops it.
    tombstone_removed_by = (
        compacted_by + _ms(config.delete_retention_ms) + _ms(config.max_segment_ms) + _ms(cleaner_backoff_ms)
    )
    return Forecast(Outlook.BOUNDED, roll_at, compacted_by, tombstone_removed_by)


def lag_for_deadline(
    config: CompactionConfig, now: datetime, deadline: datetime, cleaner_backoff_ms: int = CLEANER_BACKOFF_MS
) -> int | None:
    """The ``max.compaction.lag.ms`` whose forecast has a tombstone written ``now`` compacted halfway to
    ``deadline``, the other half to spare (for a busy cleaner, a retry); None when not even 1 ms does."""
    spare = (deadline - now) / 2 - _ms(config.min_compaction_lag_ms) - _ms(cleaner_backoff_ms)
    lag_ms = int(spare / timedelta(milliseconds=1))
    return lag_ms if lag_ms >= 1 else None
