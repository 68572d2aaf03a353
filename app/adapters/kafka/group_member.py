"""Consumer group members, for the demo's groups (the service itself never joins a group).

``commit_offsets`` commits positions for a group without joining it, as a consumer with manually
assigned partitions does (generation -1, accepted while the group has no members). ``GroupMember``
joins a group, takes its partitions and stays a member, heartbeating, until it is stopped; it never
commits, so the group keeps the positions committed before it joined.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from aiokafka import AIOKafkaConsumer, TopicPartition

JOIN_TIMEOUT_S = 30.0


async def commit_offsets(
    bootstrap: str, group: str, offsets: Mapping[tuple[str, int], int], client_id: str
) -> None:
    """Commits ``offsets`` ((topic, partition) -> next offset to read) for ``group``."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, client_id=client_id
    )
    await consumer.start()
    try:
        positions = {
            TopicPartition(topic, partition): offset for (topic, partition), offset in offsets.items()
        }
        consumer.assign(list(positions))
        await consumer.commit(positions)
    finally:
        await consumer.stop()


class GroupMember:
    """One member of ``group`` subscribed to ``topics``; ``start`` returns once it holds partitions."""

    def __init__(self, bootstrap: str, group: str, topics: Sequence[str], client_id: str) -> None:
        self._consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            enable_auto_commit=False,
            client_id=client_id,
        )
        self._topics = tuple(topics)

    async def start(self) -> None:
        self._consumer.subscribe(topics=list(self._topics))
        await self._consumer.start()
        try:
            # aiokafka joins in the background; membership shows as an assignment.
            async with asyncio.timeout(JOIN_TIMEOUT_S):
                while not self._consumer.assignment():  # noqa: ASYNC110
                    await asyncio.sleep(0.02)
        except BaseException:
            await self._consumer.stop()
            raise

    async def stop(self) -> None:
        """Leaves the group (LeaveGroup) and closes the connections."""
        await self._consumer.stop()
