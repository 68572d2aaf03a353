"""The Metadata v1-v5 decoder checked against the emulator's schema-driven encoder, and the request
against aiokafka's own Metadata request encoding."""

from __future__ import annotations

import io

import pytest
from aiokafka.protocol.metadata import MetadataRequest

from app.adapters.kafka.codecs.topic_metadata import (
    Metadata,
    PartitionMetadata,
    TopicMetadata,
    TopicMetadataRequest,
    decode_metadata,
)
from kafka_emulator.protocol import messages

BODY = {
    "ThrottleTimeMs": 3,
    "Brokers": [
        {"NodeId": 1, "Host": "broker-1.example", "Port": 9092, "Rack": None},
        {"NodeId": 2, "Host": "b2", "Port": 9093, "Rack": "eu-west-1a"},
    ],
    "ClusterId": "cluster-ü",
    "ControllerId": 2,
    "Topics": [
        {
            "ErrorCode": 0,
            "Name": "orders",
            "IsInternal": False,
            "Partitions": [
                {
                    "ErrorCode": 0,
                    "PartitionIndex": 0,
                    "LeaderId": 1,
                    "ReplicaNodes": [1, 2],
                    "IsrNodes": [1],
                    "OfflineReplicas": [2],
                },
                {"ErrorCode": 5, "PartitionIndex": 1, "LeaderId": -1, "ReplicaNodes": [], "IsrNodes": []},
            ],
        },
        {"ErrorCode": 3, "Name": "missing", "IsInternal": False, "Partitions": []},
        {"ErrorCode": 0, "Name": "__consumer_offsets", "IsInternal": True, "Partitions": []},
    ],
}
EXPECTED = Metadata(
    brokers=(1, 2),
    topics={
        "orders": TopicMetadata(
            "NONE",
            {
                0: PartitionMetadata(leader=1, replicas=(1, 2), error="NONE"),
                1: PartitionMetadata(leader=-1, replicas=(), error="LEADER_NOT_AVAILABLE"),
            },
        ),
        "missing": TopicMetadata("UNKNOWN_TOPIC_OR_PARTITION", {}),
        "__consumer_offsets": TopicMetadata("NONE", {}),
    },
)


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_decoder_reads_what_the_schema_codec_wrote(version: int) -> None:
    frame = messages.encode_response(3, version, 11, BODY)
    struct = TopicMetadataRequest(["orders"]).prepare({3: (0, version)})
    buffer = io.BytesIO(frame)
    assert struct.parse_response_header(buffer).correlation_id == 11
    assert struct.RESPONSE_TYPE.decode(buffer) == EXPECTED


def test_decoder_refuses_trailing_or_missing_bytes() -> None:
    body = messages.encode_response(3, 5, 1, BODY)[4:]
    with pytest.raises(ValueError, match="unread"):
        decode_metadata(body + b"\x00", 0, 5)
    with pytest.raises(ValueError, match="truncated"):
        decode_metadata(body[:-7], 0, 5)


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_request_matches_aiokafka_and_never_auto_creates(version: int) -> None:
    versions = {3: (0, version)}
    ours = TopicMetadataRequest(["orders", "audit"]).prepare(versions)
    theirs = MetadataRequest(["orders", "audit"], allow_auto_topic_creation=False).prepare(versions)
    assert version == ours.API_VERSION
    assert ours.encode() == theirs.encode()
    _, decoded = messages.decode_request(ours.build_request_header(1, "c").encode() + ours.encode())
    assert [t["Name"] for t in decoded["Topics"]] == ["orders", "audit"]
    assert decoded.get("AllowAutoTopicCreation", False) is False
