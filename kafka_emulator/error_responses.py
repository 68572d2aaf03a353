"""Whole-request error answers, shaped the way each Kafka request's ``getErrorResponse`` shapes them.

Used for injected faults and when a handler raises (a broker answers UNKNOWN_SERVER_ERROR then).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_emulator.protocol import messages
from kafka_emulator.protocol.api import Message

Builder = Callable[[int, Message, int], Message]


def _topics(request: Message, key: str) -> list[dict[str, Any]]:
    return list(request.get(key) or [])


def _delete_records(version: int, request: Message, error: int) -> Message:
    topics: list[Message] = [
        {
            "Name": topic["Name"],
            "Partitions": [
                {
                    "PartitionIndex": p["PartitionIndex"],
                    "LowWatermark": -1,
                    "LeaderLogStartOffset": -1,
                    "ErrorCode": error,
                }
                for p in topic["Partitions"]
            ],
        }
        for topic in _topics(request, "Topics")
    ]
    return {"ThrottleTimeMs": 0, "Topics": topics}


def _list_offsets(version: int, request: Message, error: int) -> Message:
    topics: list[Message] = [
        {
            "Name": topic["Name"],
            "Partitions": [
                {"PartitionIndex": p["PartitionIndex"], "ErrorCode": error, "Timestamp": -1, "Offset": -1}
                for p in topic["Partitions"]
            ],
        }
        for topic in _topics(request, "Topics")
    ]
    return {"Topics": topics}


def _metadata(version: int, request: Message, error: int) -> Message:
    topics: list[Message] = [
        {"ErrorCode": error, "Name": t.get("Name"), "IsInternal": False, "Partitions": []}
        for t in _topics(request, "Topics")
    ]
    return {"Brokers": [], "ControllerId": -1, "Topics": topics}


def _produce(version: int, request: Message, error: int) -> Message:
    topics: list[Message] = [
        {
            "Name": topic["Name"],
            "PartitionResponses": [
                {"Index": p["Index"], "ErrorCode": error, "BaseOffset": -1, "LogAppendTimeMs": -1}
                for p in topic["PartitionData"]
            ],
        }
        for topic in _topics(request, "TopicData")
    ]
    return {"Responses": topics}


def _fetch(version: int, request: Message, error: int) -> Message:
    # From v13 the error is only at the top level; before, every requested partition carries it.
    responses: list[dict[str, Any]] = []
    if version < 13:
        responses = [
            {
                "Topic": topic.get("Topic", ""),
                "Partitions": [
                    {
                        "PartitionIndex": p["Partition"],
                        "ErrorCode": error,
                        "HighWatermark": -1,
                        "LastStableOffset": -1,
                        "LogStartOffset": -1,
                        "Records": b"",
                    }
                    for p in topic["Partitions"]
                ],
            }
            for topic in _topics(request, "Topics")
        ]
    return {"ErrorCode": error, "SessionId": request.get("SessionId", 0), "Responses": responses}


def _offset_commit(version: int, request: Message, error: int) -> Message:
    topics: list[Message] = [
        {
            "Name": topic["Name"],
            "Partitions": [
                {"PartitionIndex": p["PartitionIndex"], "ErrorCode": error} for p in topic["Partitions"]
            ],
        }
        for topic in _topics(request, "Topics")
    ]
    return {"Topics": topics}


def _offset_fetch(version: int, request: Message, error: int) -> Message:
    if version >= 8:
        groups = [
            {"GroupId": g["GroupId"], "ErrorCode": error, "Topics": []} for g in _topics(request, "Groups")
        ]
        return {"Groups": groups}
    topics: list[Message] = [
        {
            "Name": topic["Name"],
            "Partitions": [
                {"PartitionIndex": p, "CommittedOffset": -1, "Metadata": "", "ErrorCode": error}
                for p in topic["PartitionIndexes"]
            ],
        }
        for topic in _topics(request, "Topics")
    ]
    return {"Topics": topics, "ErrorCode": error}


def _find_coordinator(version: int, request: Message, error: int) -> Message:
    if version >= 4:
        coordinators = [
            {"Key": key, "NodeId": -1, "Host": "", "Port": -1, "ErrorCode": error}
            for key in request.get("CoordinatorKeys") or []
        ]
        return {"Coordinators": coordinators}
    return {"ErrorCode": error, "NodeId": -1, "Host": "", "Port": -1}


_BUILDERS: dict[str, Builder] = {
    "DeleteRecords": _delete_records,
    "ListOffsets": _list_offsets,
    "Metadata": _metadata,
    "Produce": _produce,
    "Fetch": _fetch,
    "OffsetCommit": _offset_commit,
    "OffsetFetch": _offset_fetch,
    "FindCoordinator": _find_coordinator,
}


def error_response(api_key: int, version: int, request: Message, error: int) -> Message:
    """A response that fails the whole request with ``error``; other fields take schema defaults."""
    builder = _BUILDERS.get(messages.api_name(api_key))
    if builder is not None:
        return builder(version, request, error)
    body = messages.response_codec(api_key, version).defaults()
    if "ErrorCode" in body:
        body["ErrorCode"] = error
    return body
