"""FindCoordinator (10), JoinGroup (11), Heartbeat (12), LeaveGroup (13) and SyncGroup (14)."""

from __future__ import annotations

from kafka_emulator.groups.coordinator import GroupCoordinator
from kafka_emulator.groups.group import JoinResult
from kafka_emulator.groups.rebalance import JoinRequest
from kafka_emulator.protocol.api import Authorizer, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode

GROUP_KEY, TRANSACTION_KEY = 0, 1


class MembershipHandlers:
    def __init__(self, coordinator: GroupCoordinator, authorizer: Authorizer) -> None:
        self.coordinator = coordinator
        self.authorizer = authorizer

    def group_error(self, ctx: RequestContext, group_id: str) -> ErrorCode | None:
        """KafkaApis authorizes READ on the group before the coordinator looks at the request."""
        if not self.authorizer.allowed(ctx, "READ", "GROUP", group_id):
            return ErrorCode.GROUP_AUTHORIZATION_FAILED
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID
        if not self.coordinator.is_coordinator(ctx.broker_id, group_id):
            return ErrorCode.NOT_COORDINATOR
        return None

    async def find_coordinator(self, ctx: RequestContext, req: Message) -> Message:
        key_type = req.get("KeyType", GROUP_KEY)
        if ctx.api_version >= 4:
            return {"Coordinators": [self._locate(ctx, key, key_type) for key in req["CoordinatorKeys"]]}
        found = self._locate(ctx, req["Key"], key_type)
        del found["Key"]
        return found

    def _locate(self, ctx: RequestContext, key: str, key_type: int) -> Message:
        error: int = ErrorCode.NONE
        node = -1
        if key_type == GROUP_KEY:
            if not self.authorizer.allowed(ctx, "DESCRIBE", "GROUP", key):
                error = ErrorCode.GROUP_AUTHORIZATION_FAILED
            else:
                node = self.coordinator.coordinator_of(key)
        elif key_type == TRANSACTION_KEY:
            allowed = self.authorizer.allowed(ctx, "DESCRIBE", "TRANSACTIONAL_ID", key)
            error = (
                ErrorCode.COORDINATOR_NOT_AVAILABLE
                if allowed
                else ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            )
        else:
            error = ErrorCode.INVALID_REQUEST
        address = self.coordinator.state.broker_address(node) if node >= 0 else None
        if error == ErrorCode.NONE and address is None:
            error = ErrorCode.COORDINATOR_NOT_AVAILABLE
        host, port = address if error == ErrorCode.NONE and address is not None else ("", -1)
        return {
            "Key": key,
            "ErrorCode": error,
            "ErrorMessage": None,
            "NodeId": node if error == ErrorCode.NONE else -1,
            "Host": host,
            "Port": port,
        }

    async def join_group(self, ctx: RequestContext, req: Message) -> Message:
        group_id, member_id = req["GroupId"], req["MemberId"]
        error = self.group_error(ctx, group_id)
        if error is None and not self.coordinator.session_timeout_valid(req["SessionTimeoutMs"]):
            error = ErrorCode.INVALID_SESSION_TIMEOUT
        if error is None and member_id and self.coordinator.group(group_id) is None:
            error = ErrorCode.UNKNOWN_MEMBER_ID
        if error is not None:
            return _join_response(ctx.api_version, JoinResult(error, member_id))
        group = self.coordinator.get_or_create(group_id)
        result = await self.coordinator.rebalancer.join(group, _join_request(ctx, req))
        return _join_response(ctx.api_version, result)

    async def sync_group(self, ctx: RequestContext, req: Message) -> Message:
        group_id = req["GroupId"]
        error = self.group_error(ctx, group_id)
        group = self.coordinator.group(group_id)
        if error is None and group is None:
            error = ErrorCode.UNKNOWN_MEMBER_ID
        if (
            error is None
            and group is not None
            and not _same_protocol(req, group.protocol_type, group.protocol_name)
        ):
            error = ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        if error is not None or group is None:
            return {"ErrorCode": error, "Assignment": b""}
        assignments = {a["MemberId"]: a["Assignment"] for a in req["Assignments"]}
        result = await self.coordinator.rebalancer.sync(
            group, req["MemberId"], req["GenerationId"], assignments
        )
        return {
            "ErrorCode": result.error,
            "ProtocolType": result.protocol_type if result.error == ErrorCode.NONE else None,
            "ProtocolName": result.protocol_name if result.error == ErrorCode.NONE else None,
            "Assignment": result.assignment,
        }

    async def heartbeat(self, ctx: RequestContext, req: Message) -> Message:
        group_id = req["GroupId"]
        error = self.group_error(ctx, group_id)
        group = self.coordinator.group(group_id)
        if error is None:
            error = ErrorCode.UNKNOWN_MEMBER_ID
            if group is not None:
                error = self.coordinator.rebalancer.heartbeat(group, req["MemberId"], req["GenerationId"])
        return {"ErrorCode": error}

    async def leave_group(self, ctx: RequestContext, req: Message) -> Message:
        group_id = req["GroupId"]
        if ctx.api_version < 3:
            leaving = [{"MemberId": req["MemberId"], "GroupInstanceId": None}]
        else:
            leaving = req["Members"]
        error = self.group_error(ctx, group_id)
        if error is not None:
            return {"ErrorCode": error, "Members": []}
        group = self.coordinator.group(group_id)
        results = []
        for member in leaving:
            code = ErrorCode.UNKNOWN_MEMBER_ID
            if group is not None:
                code = self.coordinator.rebalancer.leave(group, member["MemberId"], member["GroupInstanceId"])
            results.append(
                {
                    "MemberId": member["MemberId"],
                    "GroupInstanceId": member["GroupInstanceId"],
                    "ErrorCode": code,
                }
            )
        if ctx.api_version < 3:
            return {"ErrorCode": results[0]["ErrorCode"]}
        return {"ErrorCode": ErrorCode.NONE, "Members": results}


def _join_request(ctx: RequestContext, req: Message) -> JoinRequest:
    session_timeout = req["SessionTimeoutMs"]
    rebalance_timeout = req.get("RebalanceTimeoutMs", -1)
    instance_id = req.get("GroupInstanceId")
    return JoinRequest(
        member_id=req["MemberId"],
        group_instance_id=instance_id,
        client_id=ctx.client_id or "",
        client_host="/" + ctx.client_host,  # Kafka reports InetAddress.toString(), e.g. "/127.0.0.1"
        session_timeout_ms=session_timeout,
        rebalance_timeout_ms=rebalance_timeout if rebalance_timeout > 0 else session_timeout,
        protocol_type=req["ProtocolType"],
        protocols=[(p["Name"], p["Metadata"]) for p in req["Protocols"]],
        require_known_member_id=ctx.api_version >= 4 and instance_id is None,
    )


def _join_response(version: int, result: JoinResult) -> Message:
    nullable = version >= 7
    return {
        "ErrorCode": result.error,
        "GenerationId": result.generation,
        "ProtocolType": result.protocol_type,
        "ProtocolName": result.protocol_name if result.protocol_name is not None or nullable else "",
        "Leader": result.leader_id,
        "MemberId": result.member_id,
        "Members": [
            {"MemberId": member_id, "GroupInstanceId": instance_id, "Metadata": metadata}
            for member_id, instance_id, metadata in result.members
        ],
    }


def _same_protocol(req: Message, protocol_type: str | None, protocol_name: str | None) -> bool:
    """SyncGroup v5 names the protocol; a mismatch with the group's is INCONSISTENT_GROUP_PROTOCOL."""
    wanted_type, wanted_name = req.get("ProtocolType"), req.get("ProtocolName")
    return (wanted_type is None or wanted_type == protocol_type) and (
        wanted_name is None or wanted_name == protocol_name
    )
