"""One scenario played on one target: its topic, its raw connections (one per broker and user, opened
on first use), and the routing a client does (partition leaders, group coordinators)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from helpers.emulator.wire_client import RawConnection
from helpers.referee.targets import Target
from kafka_emulator.protocol import messages
from kafka_emulator.protocol.api import Message
from kafka_emulator.protocol.errors import ErrorCode


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"ERROR_{code}"


COORDINATOR_ERRORS = {
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_COORDINATOR,
}


@dataclass
class Session:
    """``base_ts``: record timestamps are written and read relative to it (the same on both targets),
    a day back so that Kafka's time retention (7 days) and future-timestamp limit (1 hour) keep them."""

    target: Target
    topic: str
    base_ts: int = 0
    connections: dict[tuple[int | None, str], RawConnection] = field(default_factory=dict)

    def relative(self, timestamp: int) -> int:
        """A timestamp as the scenario wrote it (sentinels such as -1 unchanged)."""
        return timestamp - self.base_ts if timestamp >= self.base_ts else timestamp

    async def raw(self, broker: int | None = None, user: str = "admin") -> RawConnection:
        key = (broker, user)
        if key not in self.connections:
            self.connections[key] = await self.target.connect(broker, user)
        return self.connections[key]

    async def request(
        self, api: str, version: int, body: dict[str, Any], broker: int | None = None, user: str = "admin"
    ) -> dict[str, Any]:
        """One request; a connection the broker closes instead of answering raises ``ConnectionClosed``."""
        connection = await self.raw(broker, user)
        await connection.send_request(api, version, body)
        frame = await connection.read_frame()
        if frame is None:
            del self.connections[(broker, user)]
            raise ConnectionClosed(api, version)
        _, answer = messages.decode_response(messages.api_key(api), version, frame)
        return dict(answer)

    async def partitions(
        self, topic: str | None = None, broker: int | None = None
    ) -> dict[int, dict[str, Any]]:
        """Partition index -> its Metadata entry (leader, epoch, replicas, ISR), as ``broker`` sees it."""
        answer = await self.request("Metadata", 12, metadata_body([topic or self.topic]), broker)
        return {p["PartitionIndex"]: p for p in answer["Topics"][0]["Partitions"]}

    async def leader(self, partition: int, topic: str | None = None) -> int:
        return int((await self.partitions(topic))[partition]["LeaderId"])

    async def follower(self, partition: int, topic: str | None = None) -> int:
        entry = (await self.partitions(topic))[partition]
        return int(next(r for r in entry["ReplicaNodes"] if r != entry["LeaderId"]))

    async def coordinated(
        self, group: str, api: str, version: int, body: dict[str, Any], codes: Callable[[Message], list[int]]
    ) -> dict[str, Any]:
        """A request to ``group``'s coordinator, resent (coordinator looked up again) while it answers a
        coordinator error, as clients do: the group's partition of __consumer_offsets may be loading."""
        deadline = time.monotonic() + 30
        while True:
            found = await self.request("FindCoordinator", 3, {"Key": group, "KeyType": 0})
            if found["ErrorCode"] == 0:
                answer = await self.request(api, version, body, int(found["NodeId"]))
                if not COORDINATOR_ERRORS.intersection(codes(answer)):
                    return answer
            assert time.monotonic() < deadline, f"{api} for {group}: no coordinator"
            await asyncio.sleep(0.1)

    async def close(self) -> None:
        for connection in self.connections.values():
            await connection.close()
        self.connections.clear()


class ConnectionClosed(Exception):
    def __init__(self, api: str, version: int) -> None:
        super().__init__(f"{api} v{version}: the broker closed the connection")


def metadata_body(topics: list[str] | None) -> dict[str, Any]:
    return {
        "Topics": None if topics is None else [{"Name": t, "TopicId": bytes(16)} for t in topics],
        "AllowAutoTopicCreation": False,
        "IncludeTopicAuthorizedOperations": False,
    }
