"""DescribeGroups (API key 15) v0-v3 for several groups of one coordinator.

aiokafka's v3 request names the v2 response, which lacks ``AuthorizedOperations``; with one group the 4
extra bytes go unnoticed, with several groups every group after the first is misread. The v3 struct here
decodes the v3 response; the other versions are aiokafka's own. ``group_member`` reads one member of an
answer, its subscription and assignment bytes through ``consumer_protocol``.
"""

from __future__ import annotations

from typing import Any

from aiokafka.protocol.admin import (
    DescribeGroupsRequest_v0,
    DescribeGroupsRequest_v1,
    DescribeGroupsRequest_v2,
    DescribeGroupsRequest_v3,
    DescribeGroupsResponse_v3,
)
from aiokafka.protocol.api import Request, RequestStruct

from app.adapters.kafka.codecs.consumer_protocol import assigned_partitions, subscribed_topics
from app.domain.ports import GroupMember

DESCRIBE_GROUPS_KEY = 15


class DescribeGroupsRequestV3(RequestStruct):  # type: ignore[misc]
    API_KEY = DESCRIBE_GROUPS_KEY
    API_VERSION = 3
    RESPONSE_TYPE = DescribeGroupsResponse_v3
    SCHEMA = DescribeGroupsRequest_v3.SCHEMA


_DescribeGroupsStruct = (
    DescribeGroupsRequest_v0 | DescribeGroupsRequest_v1 | DescribeGroupsRequest_v2 | DescribeGroupsRequestV3
)


class DescribeGroupsBatch(Request[_DescribeGroupsStruct]):  # type: ignore[misc]
    """DescribeGroups for several groups of one coordinator."""

    API_KEY = DESCRIBE_GROUPS_KEY

    def __init__(self, groups: list[str]) -> None:
        self.groups = groups

    def build(self, request_struct_class: Any) -> Any:
        if request_struct_class.API_VERSION >= 3:
            return request_struct_class(self.groups, False)
        return request_struct_class(self.groups)


def group_member(entry: Any) -> GroupMember:
    """One member of a DescribeGroups answer."""
    member_id, client_id, client_host, metadata, assignment = entry[:5]
    return GroupMember(
        member_id=str(member_id),
        client_id=str(client_id),
        client_host=str(client_host),
        subscribed_topics=subscribed_topics(bytes(metadata or b"")),
        assigned=assigned_partitions(bytes(assignment or b"")),
    )
