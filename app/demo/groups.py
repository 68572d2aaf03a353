"""The demo's consumer groups: one lagging with no members, one live with a member in the demo process.

Both read the orders topics, so the unconsumed-data guard and a preview's impact have someone to
protect: ``orders-billing`` stopped part way, ``orders-shipping`` is running and is only a few records
behind. The live member never commits; the group's position is committed before it joins.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass

from app.adapters.kafka.group_member import GroupMember, commit_offsets
from app.demo.data import DEMO_TOPICS

CLIENT_ID = "kafka-purge-demo"


@dataclass(frozen=True)
class DemoGroup:
    name: str
    # topic -> the next offset to read on each of its partitions
    positions: Mapping[str, int]
    live: bool


LAGGING = DemoGroup("orders-billing", {"orders.eu": 150, "orders.us": 150}, live=False)
LIVE = DemoGroup("orders-shipping", {"orders.us": 190}, live=True)
CONSUMER_GROUPS = (LAGGING, LIVE)


def _offsets(group: DemoGroup) -> dict[tuple[str, int], int]:
    sizes = {topic.name: topic.partitions for topic in DEMO_TOPICS}
    return {
        (topic, partition): offset
        for topic, offset in group.positions.items()
        for partition in range(sizes[topic])
    }


async def start_demo_groups(bootstrap: str) -> list[GroupMember]:
    """Commits every group's positions, then joins the live groups; returns their members (to stop)."""
    # Task groups: cancelled, each waits for its children (gather would leave them running).
    async with asyncio.TaskGroup() as group:
        for g in CONSUMER_GROUPS:
            group.create_task(commit_offsets(bootstrap, g.name, _offsets(g), CLIENT_ID))
    members = [
        GroupMember(bootstrap, g.name, list(g.positions), CLIENT_ID) for g in CONSUMER_GROUPS if g.live
    ]
    try:
        async with asyncio.TaskGroup() as group:
            for member in members:
                group.create_task(member.start())
    except BaseException:
        await asyncio.gather(*(member.stop() for member in members), return_exceptions=True)
        raise
    return members
