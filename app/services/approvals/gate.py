"""Holding a protected deletion for approval, with the preview approvers approve, frozen when the
request is accepted (whether a rule protects it is read where it would be stored:
``app.services.approvals.protection``).

The preview is what ``"dry_run": true`` shows for the same request, taken from the same facts the stored
offsets come from: per partition the resolved offset (what will be sent), the log start offset and high
watermark when it was asked, the records that go, and every consumer group that has not read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.adapters.db.repositories import deletions as deletions_repo
from app.adapters.db.session import write_transaction
from app.audit import NewEvent
from app.audit.events import Actor
from app.domain.approvals import Requirement
from app.domain.impact import PartitionImpact, unconsumed_groups
from app.services.approvals import transitions
from app.services.runtime import Runtime

MAX_FROZEN_GROUPS = 1000


def frozen_preview(
    planned: Sequence[deletions_repo.PlannedPartition], impacts: Sequence[PartitionImpact]
) -> dict[str, Any]:
    """The preview stored with the request: per partition what goes, and the groups left behind."""
    by_partition = {impact.partition: impact for impact in impacts}
    partitions = []
    for p in planned:
        impact = by_partition.get(p.partition)
        partitions.append(
            {
                "topic": p.partition.topic,
                "partition": p.partition.partition,
                "resolved_offset": p.resolved_offset,
                "log_start_offset": impact.log_start_offset if impact else None,
                "high_watermark": impact.high_watermark if impact else None,
                "records_deleted": impact.records_deleted if impact else None,
                "unconsumed_groups": [
                    {
                        "group": g.group,
                        "committed_offset": g.committed_offset,
                        "unread_records": g.unread_records,
                    }
                    for g in (impact.groups if impact else ())
                ],
            }
        )
    groups = unconsumed_groups(impacts, ())
    return {
        "records_deleted": sum(i.records_deleted for i in impacts),
        "partitions": partitions,
        "unconsumed_groups": [
            {"group": g.group, "unread_records": g.unread_records, "partitions": g.partitions}
            for g in groups[:MAX_FROZEN_GROUPS]
        ],
    }


async def hold(
    runtime: Runtime,
    new: deletions_repo.NewDeletion,
    requested: NewEvent,
    need: Requirement,
    preview: dict[str, Any],
    actor: Actor,
) -> None:
    """Store the protected deletion awaiting approval, in a transaction of its own (never handed to the
    executor)."""
    async with write_transaction(runtime.sessionmaker) as session:
        await transitions.hold_deletion(session, new, requested, need, preview, actor)
