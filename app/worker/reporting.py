"""What the executor says about one send group: a log line per deletion (its id, request id and cluster
in the context fields), a WARNING per deletion and Kafka error for the partitions that failed or will
be retried, and the outcome counters by Kafka error name."""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from app.adapters.db.repositories.claims import PartitionUpdate
from app.domain.deletion_requests import PartitionStatus
from app.domain.ports import Claim
from app.logs import log_context
from app.worker import metrics

log = logging.getLogger("kafka_purge.worker")

# Partitions named in one warning line; the rest are counted.
LISTED = 10
SUCCESS = "NONE"


@dataclass
class _Deletion:
    request_id: str
    statuses: Counter[str] = field(default_factory=Counter)
    # (Kafka error name, state it leaves the partition in) -> "topic-partition" names
    errors: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))


@dataclass
class GroupReport:
    """Collects a group's decided updates as the leaders answer; ``log`` writes them out."""

    cluster: str
    deletions: dict[str, _Deletion] = field(default_factory=dict)
    answers: Counter[str] = field(default_factory=Counter)

    def add(self, claim: Claim, update: PartitionUpdate) -> None:
        deletion = self.deletions.get(claim.deletion_id)
        if deletion is None:
            deletion = self.deletions[claim.deletion_id] = _Deletion(claim.request_id)
        deletion.statuses[update.status.value] += 1
        error = update.error_code or SUCCESS
        self.answers[error] += 1
        if error != SUCCESS:
            deletion.errors[error, update.status.value].append(f"{claim.topic}-{claim.partition}")

    def log(self, seconds: float) -> None:
        for error, count in self.answers.items():
            metrics.BROKER_ANSWERS.labels(self.cluster, error).inc(count)
        for deletion_id, deletion in self.deletions.items():
            # The deletion's own request id (a batch mixes requests); its principal is on the API's line.
            ids = {"deletion_id": deletion_id, "request_id": deletion.request_id}
            with log_context(**ids, cluster=self.cluster, principal=None):
                log.info(
                    "deletion %s: DeleteRecords answered for %d partition(s): %s",
                    deletion_id,
                    deletion.statuses.total(),
                    dict(deletion.statuses),
                    extra={"outcomes": dict(deletion.statuses), "seconds": round(seconds, 3)},
                )
                for (error, status), partitions in sorted(deletion.errors.items()):
                    _warn(deletion_id, error, status, partitions)


def _warn(deletion_id: str, error: str, status: str, partitions: list[str]) -> None:
    ended = (PartitionStatus.FAILED.value, PartitionStatus.SUCCEEDED.value)
    then = status if status in ended else f"{status}, retried"
    listed = ", ".join(partitions[:LISTED])
    more = f" and {len(partitions) - LISTED} more" if len(partitions) > LISTED else ""
    log.warning(
        "deletion %s: %s on %d partition(s) (%s): %s%s",
        deletion_id,
        error,
        len(partitions),
        then,
        listed,
        more,
        extra={"kafka_error": error, "status": status, "partitions": len(partitions)},
    )
