"""A classic consumer group: its members, state and generation (GroupMetadata.scala, MemberMetadata.scala)."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum

from kafka_emulator.protocol.errors import ErrorCode


class GroupState(Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(frozen=True)
class JoinResult:
    error: ErrorCode
    member_id: str
    generation: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = ""
    members: tuple[tuple[str, str | None, bytes], ...] = ()  # (member id, instance id, metadata), leader only


@dataclass(frozen=True)
class SyncResult:
    error: ErrorCode
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    join_future: asyncio.Future[JoinResult] | None = None
    sync_future: asyncio.Future[SyncResult] | None = None
    expiry: asyncio.TimerHandle | None = None

    def metadata(self, protocol: str | None) -> bytes:
        return next((data for name, data in self.protocols if name == protocol), b"")

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def awaiting_join(self) -> bool:
        return self.join_future is not None and not self.join_future.done()

    def awaiting_sync(self) -> bool:
        return self.sync_future is not None and not self.sync_future.done()

    def complete_join(self, result: JoinResult) -> None:
        if self.awaiting_join():
            assert self.join_future is not None
            self.join_future.set_result(result)
        self.join_future = None

    def complete_sync(self, result: SyncResult) -> None:
        if self.awaiting_sync():
            assert self.sync_future is not None
            self.sync_future.set_result(result)
        self.sync_future = None

    def cancel_expiry(self) -> None:
        if self.expiry is not None:
            self.expiry.cancel()
            self.expiry = None


@dataclass
class Group:
    group_id: str
    state: GroupState = GroupState.EMPTY
    protocol_type: str | None = None
    protocol_name: str | None = None
    generation: int = 0
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    # member ids handed out with MEMBER_ID_REQUIRED, each with the timer that forgets it
    pending_members: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    join_timer: asyncio.TimerHandle | None = None
    in_initial_delay: bool = False

    def add(self, member: Member) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        timer = self.pending_members.pop(member.member_id, None)
        if timer is not None:
            timer.cancel()
        if self.leader_id is None:
            self.leader_id = member.member_id

    def remove(self, member_id: str) -> Member | None:
        member = self.members.pop(member_id, None)
        if member is not None:
            member.cancel_expiry()
            if self.leader_id == member_id:
                self.leader_id = next(iter(self.members), None)
        return member

    def candidate_protocols(self) -> set[str]:
        """Protocols every member supports."""
        names = [set(member.protocol_names()) for member in self.members.values()]
        return set.intersection(*names) if names else set()

    def supports(self, protocol_type: str, protocols: list[str]) -> bool:
        if self.state == GroupState.EMPTY or not self.members:
            return bool(protocol_type) and bool(protocols)
        return protocol_type == self.protocol_type and bool(self.candidate_protocols() & set(protocols))

    def select_protocol(self) -> str:
        """Every member votes for its most preferred candidate; the most votes wins (GroupMetadata.vote)."""
        candidates = self.candidate_protocols()
        votes: Counter[str] = Counter()
        for member in self.members.values():
            votes[next(name for name in member.protocol_names() if name in candidates)] += 1
        return votes.most_common(1)[0][0]

    def all_joined(self) -> bool:
        return not self.pending_members and all(m.awaiting_join() for m in self.members.values())

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def cancel_join_timer(self) -> None:
        if self.join_timer is not None:
            self.join_timer.cancel()
            self.join_timer = None
        self.in_initial_delay = False

    def find_member(self, member_id: str, group_instance_id: str | None) -> Member | None:
        """Members are found by id; a static member leaving by instance id alone is found by that."""
        if member_id:
            return self.members.get(member_id)
        if group_instance_id is None:
            return None
        return next((m for m in self.members.values() if m.group_instance_id == group_instance_id), None)

    def join_result(self, member: Member) -> JoinResult:
        """What a member learns about the current generation; only the leader sees everyone's metadata."""
        members: tuple[tuple[str, str | None, bytes], ...] = ()
        if member.member_id == self.leader_id:
            members = tuple(
                (m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
                for m in self.members.values()
            )
        return JoinResult(
            error=ErrorCode.NONE,
            member_id=member.member_id,
            generation=self.generation,
            protocol_type=self.protocol_type,
            protocol_name=self.protocol_name,
            leader_id=self.leader_id or "",
            members=members,
        )

    def sync_result(self, member: Member) -> SyncResult:
        return SyncResult(ErrorCode.NONE, member.assignment, self.protocol_type, self.protocol_name)
