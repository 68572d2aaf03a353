"""DescribeGroups (15) and ListGroups (16) for classic groups (kafka-semantics.md §6.2, §6.3)."""

from __future__ import annotations

from kafka_emulator.groups.coordinator import GroupCoordinator
from kafka_emulator.groups.group import Group, GroupState
from kafka_emulator.protocol.api import Authorizer, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode

CLASSIC = "classic"
# AclEntry.supportedOperations(GROUP), as AclOperation codes, for the AuthorizedOperations bitfield
GROUP_OPERATIONS = {"READ": 3, "DELETE": 6, "DESCRIBE": 8, "DESCRIBE_CONFIGS": 10, "ALTER_CONFIGS": 11}
NOT_REQUESTED = -(2**31)


class AdminHandlers:
    def __init__(self, coordinator: GroupCoordinator, authorizer: Authorizer) -> None:
        self.coordinator = coordinator
        self.authorizer = authorizer

    async def list_groups(self, ctx: RequestContext, req: Message) -> Message:
        states = {s.lower() for s in req.get("StatesFilter", [])}
        types = {t.lower() for t in req.get("TypesFilter", [])}
        see_all = self.authorizer.allowed(ctx, "DESCRIBE", "CLUSTER", "kafka-cluster")
        listed = []
        for group in self.coordinator.groups_on(ctx.broker_id):
            if group.state == GroupState.DEAD or (states and group.state.value.lower() not in states):
                continue
            if types and CLASSIC not in types:
                continue
            if see_all or self.authorizer.allowed(ctx, "DESCRIBE", "GROUP", group.group_id):
                listed.append(_listed(group))
        return {"ErrorCode": ErrorCode.NONE, "Groups": listed}

    async def describe_groups(self, ctx: RequestContext, req: Message) -> Message:
        include_ops = req.get("IncludeAuthorizedOperations", False)
        return {"Groups": [self._describe(ctx, group_id, include_ops) for group_id in req["Groups"]]}

    def _describe(self, ctx: RequestContext, group_id: str, include_ops: bool) -> Message:
        if not self.authorizer.allowed(ctx, "DESCRIBE", "GROUP", group_id):
            return _failed(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED)
        if not self.coordinator.is_coordinator(ctx.broker_id, group_id):
            return _failed(group_id, ErrorCode.NOT_COORDINATOR)
        group = self.coordinator.group(group_id)
        described = _summary(group) if group is not None else _failed(group_id, ErrorCode.NONE, "Dead")
        if include_ops:
            described["AuthorizedOperations"] = self._authorized_operations(ctx, group_id)
        return described

    def _authorized_operations(self, ctx: RequestContext, group_id: str) -> int:
        bits = 0
        for name, code in GROUP_OPERATIONS.items():
            if self.authorizer.allowed(ctx, name, "GROUP", group_id):
                bits |= 1 << code
        return bits


def _listed(group: Group) -> Message:
    return {
        "GroupId": group.group_id,
        "ProtocolType": group.protocol_type or "",
        "GroupState": group.state.value,
        "GroupType": CLASSIC,
    }


def _failed(group_id: str, error: int, state: str = "") -> Message:
    return {
        "ErrorCode": error,
        "GroupId": group_id,
        "GroupState": state,
        "ProtocolType": "",
        "ProtocolData": "",
        "Members": [],
        "AuthorizedOperations": NOT_REQUESTED,
    }


def _summary(group: Group) -> Message:
    """Member metadata and assignments are only shown once the group is Stable (GroupMetadata.summary)."""
    stable = group.state == GroupState.STABLE
    protocol = group.protocol_name if stable else None
    members = [
        {
            "MemberId": m.member_id,
            "GroupInstanceId": m.group_instance_id,
            "ClientId": m.client_id,
            "ClientHost": m.client_host,
            "MemberMetadata": m.metadata(protocol) if stable else b"",
            "MemberAssignment": m.assignment if stable else b"",
        }
        for m in group.members.values()
    ]
    return {
        "ErrorCode": ErrorCode.NONE,
        "GroupId": group.group_id,
        "GroupState": group.state.value,
        "ProtocolType": group.protocol_type or "",
        "ProtocolData": protocol or "",
        "Members": members,
        "AuthorizedOperations": NOT_REQUESTED,
    }
