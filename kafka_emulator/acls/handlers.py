"""DescribeAcls (29), CreateAcls (30) and DeleteAcls (31) as a KRaft broker answers them (AclApis)."""

from __future__ import annotations

from kafka_emulator.acls.model import (
    CLUSTER_NAME,
    AclBinding,
    AclFilter,
    Operation,
    PatternType,
    Permission,
    ResourceType,
    enum_value,
)
from kafka_emulator.acls.store import AclStore
from kafka_emulator.protocol.api import Authorizer, HandlerRegistry, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31
NO_AUTHORIZER = "No Authorizer is configured on the broker"
UNKNOWN_FILTER = "Filter contains UNKNOWN elements"


def register_acl_handlers(registry: HandlerRegistry, store: AclStore, authorizer: Authorizer) -> None:
    handlers = AclHandlers(store, authorizer)
    registry.register(DESCRIBE_ACLS, handlers.describe_acls)
    registry.register(CREATE_ACLS, handlers.create_acls)
    registry.register(DELETE_ACLS, handlers.delete_acls)


def _filter(req: Message) -> AclFilter:
    return AclFilter(
        resource_type=enum_value(ResourceType, req["ResourceTypeFilter"]),
        name=req["ResourceNameFilter"],
        pattern_type=enum_value(PatternType, req.get("PatternTypeFilter", PatternType.LITERAL)),
        principal=req["PrincipalFilter"],
        host=req["HostFilter"],
        operation=enum_value(Operation, req["Operation"]),
        permission=enum_value(Permission, req["PermissionType"]),
    )


def _binding(creation: Message) -> AclBinding:
    return AclBinding(
        resource_type=enum_value(ResourceType, creation["ResourceType"]),
        name=creation["ResourceName"],
        pattern_type=enum_value(PatternType, creation.get("ResourcePatternType", PatternType.LITERAL)),
        principal=creation["Principal"],
        host=creation["Host"],
        operation=enum_value(Operation, creation["Operation"]),
        permission=enum_value(Permission, creation["PermissionType"]),
    )


def _acl_fields(acl: AclBinding) -> Message:
    return {
        "Principal": acl.principal,
        "Host": acl.host,
        "Operation": int(acl.operation),
        "PermissionType": int(acl.permission),
    }


def _described(acls: list[AclBinding]) -> list[Message]:
    resources: dict[tuple[int, str, int], list[Message]] = {}
    for acl in acls:
        key = (int(acl.resource_type), acl.name, int(acl.pattern_type))
        resources.setdefault(key, []).append(_acl_fields(acl))
    return [
        {"ResourceType": rtype, "ResourceName": name, "PatternType": ptype, "Acls": entries}
        for (rtype, name, ptype), entries in resources.items()
    ]


def _matching(acl: AclBinding) -> Message:
    return {
        "ErrorCode": 0,
        "ErrorMessage": None,
        "ResourceType": int(acl.resource_type),
        "ResourceName": acl.name,
        "PatternType": int(acl.pattern_type),
        **_acl_fields(acl),
    }


class AclHandlers:
    def __init__(self, store: AclStore, authorizer: Authorizer) -> None:
        self.store = store
        self.authorizer = authorizer

    def _cluster_allowed(self, ctx: RequestContext, operation: str) -> bool:
        return self.authorizer.allowed(ctx, operation, "CLUSTER", CLUSTER_NAME)

    def _refusal(self, ctx: RequestContext, operation: str) -> tuple[int, str | None] | None:
        """Kafka checks the CLUSTER permission first, then whether an authorizer is configured."""
        if not self._cluster_allowed(ctx, operation):
            return ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None
        if not self.store.enabled:
            return ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER
        return None

    async def describe_acls(self, ctx: RequestContext, req: Message) -> Message:
        refusal = self._refusal(ctx, "DESCRIBE")
        if refusal is not None:
            return {"ErrorCode": refusal[0], "ErrorMessage": refusal[1], "Resources": []}
        acl_filter = _filter(req)
        if acl_filter.unknown_element():
            return {"ErrorCode": ErrorCode.INVALID_REQUEST, "ErrorMessage": UNKNOWN_FILTER}
        return {"ErrorCode": 0, "ErrorMessage": None, "Resources": _described(self.store.find(acl_filter))}

    async def create_acls(self, ctx: RequestContext, req: Message) -> Message:
        refusal = self._refusal(ctx, "ALTER")
        results = []
        for creation in req["Creations"]:
            if refusal is not None:
                results.append({"ErrorCode": refusal[0], "ErrorMessage": refusal[1]})
                continue
            reason = self.store.create(_binding(creation))
            code = ErrorCode.NONE if reason is None else ErrorCode.INVALID_REQUEST
            results.append({"ErrorCode": code, "ErrorMessage": reason})
        return {"Results": results}

    async def delete_acls(self, ctx: RequestContext, req: Message) -> Message:
        refusal = self._refusal(ctx, "ALTER")
        return {"FilterResults": [self._delete_one(_filter(raw), refusal) for raw in req["Filters"]]}

    def _delete_one(self, acl_filter: AclFilter, refusal: tuple[int, str | None] | None) -> Message:
        if refusal is None and acl_filter.unknown_element():
            refusal = ErrorCode.INVALID_REQUEST, UNKNOWN_FILTER
        if refusal is not None:
            return {"ErrorCode": refusal[0], "ErrorMessage": refusal[1], "MatchingAcls": []}
        removed = self.store.remove(acl_filter)
        return {"ErrorCode": 0, "ErrorMessage": None, "MatchingAcls": [_matching(acl) for acl in removed]}
