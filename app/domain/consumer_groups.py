"""Consumer groups as a retention sweep sees them: Spark's own source groups, and whether a group is
active and may read a topic (KIP-762's check for groups outside a policy's consumers)."""

from __future__ import annotations

from app.domain.ports import GroupInfo

SPARK_GROUP_PREFIX = "spark-kafka-source-"
ACTIVE_GROUP_STATES = frozenset(
    {"Stable", "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"}
)


def is_spark_source_group(group_id: str) -> bool:
    return group_id.startswith(SPARK_GROUP_PREFIX)


def group_is_active(group: GroupInfo) -> bool:
    return bool(group.members) and group.state in ACTIVE_GROUP_STATES


def group_may_read(group: GroupInfo, topic: str) -> bool:
    """Whether an active group's members may read ``topic``. Subscriptions and assignments are known only
    while the group is Stable, and a member whose metadata did not decode may read anything."""
    if group.protocol_type not in ("consumer", ""):
        return False  # e.g. a Connect worker group: its members read no topic through it
    if group.state != "Stable":
        return True
    for member in group.members:
        topics = set(member.subscribed_topics) | {tp.topic for tp in member.assigned}
        if not topics or topic in topics:
            return True
    return False
