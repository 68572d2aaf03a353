"""The completion summary of a large deletion, half made before its last leader answers.

The summary (``deletion.completed``, see ``app.worker.outcomes.events``) lists every partition's outcome
column by column, in (topic, partition) order. Five of its ten columns come from the claims alone
(topic, partition, resolved offset, attempts, worker): an ``OutcomeSummary`` orders the claims and
renders those columns while the leaders are still working, so that when the last answer completes the
deletion only the five columns of the written outcomes are left to build and render. At 10,000
partitions that halves the summary's CPU after the last answer, on the event loop that also issues the
COMMITs of the side writes the completing write waits for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any

from app.adapters.db.repositories.claims import Claim, PartitionUpdate
from app.audit import canonical_json, canonical_object

# Below this many partitions the whole summary is made at completion (it costs little then).
SUMMARY_AHEAD_PARTITIONS = 1_000
_TOPIC_PARTITION = itemgetter(2, 3)  # Claim.topic, Claim.partition: a sort key in C


class OutcomeSummary:
    """What the claims of one deletion's partitions, held by ``owner``, fix of its completion summary."""

    def __init__(self, claims: Sequence[Claim], owner: str) -> None:
        ordered = sorted(claims, key=_TOPIC_PARTITION)
        self.deletion_id = ordered[0].deletion_id
        self._ids = [claim.id for claim in ordered]
        self._row_ids = frozenset(self._ids)
        self._claim_columns: dict[str, list[Any]] = {
            "topic": [claim.topic for claim in ordered],
            "partition": [claim.partition for claim in ordered],
            "resolved_offset": [claim.resolved_offset for claim in ordered],
            "attempts": [claim.attempts for claim in ordered],
            "worker": [owner] * len(ordered),
        }
        # On a partition's first attempt no write-back wrote its row before: an offset the answer lacks
        # (a v0-v2 DeleteRecords answer has no leader log start offset) is null in the row as well.
        self._first_attempts = all(claim.attempts == 1 for claim in ordered)
        self._rendered: dict[str, str] | None = None

    def render_claims(self) -> dict[str, str]:
        """The claims' columns rendered (once: call it while the leaders work to have it done then)."""
        if self._rendered is None:
            self._rendered = {name: canonical_json(values) for name, values in self._claim_columns.items()}
        return self._rendered

    def columns(self, written: Sequence[PartitionUpdate]) -> dict[str, list[Any]] | None:
        """The summary's columns, given the rows ``written``, one per partition; None unless ``written``
        holds exactly these partitions, each with both offsets or on its first attempt (an offset an
        update lacks is the row's older one, null on a first attempt; otherwise the summary is read
        back instead)."""
        by_id = {update.id: update for update in written}
        if len(written) != len(self._ids) or by_id.keys() != self._row_ids:
            return None
        rows = [by_id[row_id] for row_id in self._ids]
        low_watermarks = [u.low_watermark for u in rows]
        log_start_offsets = [u.leader_log_start_offset for u in rows]
        if not self._first_attempts and (None in low_watermarks or None in log_start_offsets):
            return None
        return {
            **self._claim_columns,
            "status": [u.status.value for u in rows],
            "low_watermark": low_watermarks,
            "leader_log_start_offset": log_start_offsets,
            "error_code": [u.error_code for u in rows],
            "fence": [u.fence for u in rows],
        }

    def outcomes(self, written: Sequence[PartitionUpdate]) -> tuple[dict[str, list[Any]], str] | None:
        """``columns`` and their canonical JSON (``canonical_json`` of the columns)."""
        columns = self.columns(written)
        if columns is None:
            return None
        rendered = self.render_claims()
        written_json = {
            name: canonical_json(values) for name, values in columns.items() if name not in rendered
        }
        return columns, canonical_object({**rendered, **written_json})


def summary_ahead(claims: Mapping[int, Claim], owner: str) -> OutcomeSummary | None:
    """An ``OutcomeSummary``, its claims' columns rendered, when ``claims`` are many partitions of one
    deletion; else None. Whether they are all of its partitions is known only when it completes
    (``OutcomeSummary.outcomes``)."""
    if len(claims) < SUMMARY_AHEAD_PARTITIONS:
        return None
    if len({claim.deletion_id for claim in claims.values()}) != 1:
        return None
    summary = OutcomeSummary(list(claims.values()), owner)
    summary.render_claims()
    return summary
