"""Do record timestamps around a time-based cut look out of order?

ListOffsets by time answers the first record whose timestamp is at or after the cut time. With
producer clocks out of step (or timestamps set by applications) records around that point may not be
in time order, and then a time cut deletes records newer than the cut time or keeps older ones - a known
cause of accidental over-deletion (redpanda docs#1388). The preview samples a few records on each side
of the cut and reports what it saw.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

WINDOW = 5  # records sampled on each side of the cut


@dataclass(frozen=True)
class CutTimestamps:
    sampled: int
    newer_below_cut: int  # records that would be deleted although they are not older than the cut time
    older_at_or_after_cut: int  # records kept although they are older than the cut time
    decreasing: bool  # timestamps go backwards somewhere in the sample

    @property
    def out_of_order(self) -> bool:
        return bool(self.newer_below_cut or self.older_at_or_after_cut or self.decreasing)


def sample_start(resolved: int, log_start: int) -> int:
    return max(log_start, resolved - WINDOW)


def judge_cut(cut_ms: int, resolved: int, records: Sequence[tuple[int, int]]) -> CutTimestamps:
    """``records``: (offset, timestamp) in offset order around ``resolved``."""
    window = [(o, ts) for o, ts in records if resolved - WINDOW <= o < resolved + WINDOW]
    stamps = [ts for _, ts in window]
    return CutTimestamps(
        sampled=len(window),
        newer_below_cut=sum(1 for o, ts in window if o < resolved and ts >= cut_ms),
        older_at_or_after_cut=sum(1 for o, ts in window if o >= resolved and ts < cut_ms),
        decreasing=any(later < earlier for earlier, later in itertools.pairwise(stamps)),
    )
