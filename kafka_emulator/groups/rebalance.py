"""The classic rebalance protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup and session expiry.

Follows GroupCoordinator.scala: a rebalance (PreparingRebalance) completes when every known member has
rejoined or the largest rebalance timeout passes; members that did not rejoin are dropped. A group that
starts from Empty first waits `initial_delay_ms` (group.initial.rebalance.delay.ms) so that members
starting together land in one generation. Timers use the running loop's clock (monotonic).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass

from kafka_emulator.groups.group import Group, GroupState, JoinResult, Member, SyncResult
from kafka_emulator.protocol.errors import ErrorCode


@dataclass(frozen=True)
class JoinRequest:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    require_known_member_id: bool


class Rebalancer:
    def __init__(self, initial_delay_ms: int = 50) -> None:
        self.initial_delay_ms = initial_delay_ms

    async def join(self, group: Group, req: JoinRequest) -> JoinResult:
        if group.state == GroupState.DEAD:
            return JoinResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, req.member_id)
        if not group.supports(req.protocol_type, [name for name, _ in req.protocols]):
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, req.member_id)
        if not req.member_id:
            member_id = f"{req.client_id}-{uuid.uuid4()}"
            if req.require_known_member_id:
                self._add_pending(group, member_id, req.session_timeout_ms)
                return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, member_id)
            return await self._add_and_rebalance(group, req, member_id)
        if req.member_id in group.pending_members:
            return await self._add_and_rebalance(group, req, req.member_id)
        member = group.members.get(req.member_id)
        if member is None:
            return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, req.member_id)
        return await self._join_known(group, member, req)

    async def sync(
        self, group: Group, member_id: str, generation: int, assignments: dict[str, bytes]
    ) -> SyncResult:
        member = group.members.get(member_id)
        if group.state == GroupState.DEAD:
            return SyncResult(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if member is None or group.state == GroupState.EMPTY:
            return SyncResult(ErrorCode.UNKNOWN_MEMBER_ID)
        if generation != group.generation:
            return SyncResult(ErrorCode.ILLEGAL_GENERATION)
        if group.state == GroupState.PREPARING_REBALANCE:
            return SyncResult(ErrorCode.REBALANCE_IN_PROGRESS)
        self.touch(group, member)
        if group.state == GroupState.STABLE:
            return group.sync_result(member)
        member.complete_sync(SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
        future: asyncio.Future[SyncResult] = asyncio.get_running_loop().create_future()
        member.sync_future = future
        if member_id == group.leader_id:
            self._distribute(group, assignments)
        return await future

    def heartbeat(self, group: Group, member_id: str, generation: int) -> ErrorCode:
        if group.state == GroupState.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if generation != group.generation:
            return ErrorCode.ILLEGAL_GENERATION
        self.touch(group, member)
        if group.state == GroupState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def leave(self, group: Group, member_id: str, group_instance_id: str | None) -> ErrorCode:
        timer = group.pending_members.pop(member_id, None)
        if timer is not None:
            timer.cancel()
            self._try_complete_join(group)
            return ErrorCode.NONE
        member = group.find_member(member_id, group_instance_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        self.remove_member(group, member)
        return ErrorCode.NONE

    def touch(self, group: Group, member: Member) -> None:
        """A heartbeat (or commit, join, sync) restarts the member's session timer."""
        member.cancel_expiry()
        delay = member.session_timeout_ms / 1000
        member.expiry = asyncio.get_running_loop().call_later(delay, self._expire, group, member.member_id)

    def remove_member(self, group: Group, member: Member) -> None:
        member.complete_join(JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member.member_id))
        member.complete_sync(SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self._prepare_rebalance(group)
        self._try_complete_join(group)

    async def _add_and_rebalance(self, group: Group, req: JoinRequest, member_id: str) -> JoinResult:
        member = Member(
            member_id=member_id,
            group_instance_id=req.group_instance_id,
            client_id=req.client_id,
            client_host=req.client_host,
            session_timeout_ms=req.session_timeout_ms,
            rebalance_timeout_ms=req.rebalance_timeout_ms,
            protocol_type=req.protocol_type,
            protocols=req.protocols,
        )
        group.add(member)
        return await self._await_rebalance(group, member)

    async def _join_known(self, group: Group, member: Member, req: JoinRequest) -> JoinResult:
        unchanged = member.protocols == req.protocols
        if group.state == GroupState.COMPLETING_REBALANCE and unchanged:
            return group.join_result(member)
        is_leader = member.member_id == group.leader_id
        if group.state == GroupState.STABLE and unchanged and not is_leader:
            return group.join_result(member)
        member.protocols = req.protocols
        member.session_timeout_ms = req.session_timeout_ms
        member.rebalance_timeout_ms = req.rebalance_timeout_ms
        member.client_id, member.client_host = req.client_id, req.client_host
        member.complete_join(JoinResult(ErrorCode.REBALANCE_IN_PROGRESS, member.member_id))
        return await self._await_rebalance(group, member)

    async def _await_rebalance(self, group: Group, member: Member) -> JoinResult:
        future: asyncio.Future[JoinResult] = asyncio.get_running_loop().create_future()
        member.join_future = future
        member.cancel_expiry()
        if group.state != GroupState.PREPARING_REBALANCE:
            self._prepare_rebalance(group)
        self._try_complete_join(group)
        return await future

    def _add_pending(self, group: Group, member_id: str, session_timeout_ms: int) -> None:
        loop = asyncio.get_running_loop()
        timer = loop.call_later(session_timeout_ms / 1000, self._expire_pending, group, member_id)
        group.pending_members[member_id] = timer

    def _expire_pending(self, group: Group, member_id: str) -> None:
        if group.pending_members.pop(member_id, None) is not None:
            self._try_complete_join(group)

    def _expire(self, group: Group, member_id: str) -> None:
        member = group.members.get(member_id)
        if member is None:
            return
        member.expiry = None
        if member.awaiting_join() or member.awaiting_sync():
            self.touch(group, member)
            return
        self.remove_member(group, member)

    def _prepare_rebalance(self, group: Group) -> None:
        if group.state == GroupState.COMPLETING_REBALANCE:
            for member in group.members.values():
                member.assignment = b""
                member.complete_sync(SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
        from_empty = group.state == GroupState.EMPTY
        group.cancel_join_timer()
        group.state = GroupState.PREPARING_REBALANCE
        loop = asyncio.get_running_loop()
        if from_empty:
            group.in_initial_delay = True
            group.join_timer = loop.call_later(self.initial_delay_ms / 1000, self._initial_delay_over, group)
        else:
            self._arm_rebalance_timeout(group)

    def _arm_rebalance_timeout(self, group: Group) -> None:
        delay = group.rebalance_timeout_ms() / 1000
        group.join_timer = asyncio.get_running_loop().call_later(delay, self._complete_join, group)

    def _initial_delay_over(self, group: Group) -> None:
        group.join_timer = None
        group.in_initial_delay = False
        if group.all_joined():
            self._complete_join(group)
        else:
            self._arm_rebalance_timeout(group)

    def _try_complete_join(self, group: Group) -> None:
        if group.state != GroupState.PREPARING_REBALANCE or group.in_initial_delay:
            return
        if group.all_joined():
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        group.cancel_join_timer()
        for member in [m for m in group.members.values() if not m.awaiting_join()]:
            group.remove(member.member_id)
        group.generation += 1
        if not group.members:
            group.protocol_name = None
            group.state = GroupState.EMPTY
            return
        group.protocol_name = group.select_protocol()
        group.state = GroupState.COMPLETING_REBALANCE
        for member in group.members.values():
            member.complete_join(group.join_result(member))
            self.touch(group, member)

    def _distribute(self, group: Group, assignments: dict[str, bytes]) -> None:
        group.state = GroupState.STABLE
        for member in group.members.values():
            member.assignment = assignments.get(member.member_id, b"")
            member.complete_sync(group.sync_result(member))
