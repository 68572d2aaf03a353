"""The schema-driven codec: round trips for every vendored schema and version, golden bytes, and
byte-for-byte agreement with aiokafka's independent encoders."""

from __future__ import annotations

import random
import struct

import pytest
from aiokafka.protocol.admin import (
    ApiVersionRequest_v0,
    ApiVersionRequest_v2,
    DeleteRecordsRequest_v0,
    DeleteRecordsRequest_v2,
    DeleteRecordsResponse_v2,
)
from aiokafka.protocol.metadata import MetadataRequest_v1
from helpers.emulator.schema_samples import sample_struct

from kafka_emulator.protocol import messages
from kafka_emulator.protocol.codec import compile_struct
from kafka_emulator.protocol.primitives import DecodeError
from kafka_emulator.protocol.schema import MessageSpec

DELETE_RECORDS = 21


def _all_versions() -> list[tuple[int, int, str]]:
    cases = []
    for key, schema in sorted(messages.apis().items()):
        low, high = messages.supported_versions(key)
        for version in range(low, high + 1):
            cases.append((key, version, schema.name))
    return cases


ALL_VERSIONS = _all_versions()


def _round_trip(spec: MessageSpec, version: int, seed: int) -> None:
    flexible = version in spec.flexible_versions
    codec = compile_struct(spec.fields, version, flexible)
    sample = sample_struct(spec.fields, version, flexible, random.Random(seed))
    out: list[bytes] = []
    codec.write(sample, out)
    data = b"".join(out)
    decoded, end = codec.read(data, 0)
    assert end == len(data)
    assert decoded == sample
    again: list[bytes] = []
    codec.write(decoded, again)
    assert b"".join(again) == data


@pytest.mark.parametrize(("key", "version", "name"), ALL_VERSIONS)
def test_every_request_and_response_round_trips(key: int, version: int, name: str) -> None:
    schema = messages.apis()[key]
    for seed in range(5):
        _round_trip(schema.request, version, seed)
        _round_trip(schema.response, version, seed)


@pytest.mark.parametrize("name", ["ConsumerProtocolSubscription", "ConsumerProtocolAssignment"])
def test_consumer_protocol_schemas_round_trip(name: str) -> None:
    spec = messages.message_spec(name)
    for version in range(spec.valid_versions.low, spec.valid_versions.high + 1):
        for seed in range(5):
            _round_trip(spec, version, seed)


@pytest.mark.parametrize(("key", "version", "name"), ALL_VERSIONS)
def test_empty_message_encodes_schema_defaults(key: int, version: int, name: str) -> None:
    for codec in (messages.request_codec(key, version), messages.response_codec(key, version)):
        out: list[bytes] = []
        codec.write({}, out)
        decoded, _ = codec.read(b"".join(out), 0)
        assert decoded == codec.defaults()


@pytest.mark.parametrize(("key", "version", "name"), ALL_VERSIONS)
def test_every_truncated_request_is_a_decode_error(key: int, version: int, name: str) -> None:
    spec = messages.apis()[key].request
    body = sample_struct(spec.fields, version, version in spec.flexible_versions, random.Random(7))
    frame = messages.encode_request(messages.RequestHeader(key, version, 42, "c"), body)
    header, decoded = messages.decode_request(frame)
    assert (header.correlation_id, header.client_id, decoded) == (42, "c", body)
    for cut in range(len(frame)):
        with pytest.raises(DecodeError):
            messages.decode_request(frame[:cut])


def test_delete_records_v3_fields_and_defaults() -> None:
    request = messages.request_codec(DELETE_RECORDS, 3).defaults()
    assert request == {"Topics": [], "TimeoutMs": 0, "LeaderOnly": False}
    assert "LeaderOnly" not in messages.request_codec(DELETE_RECORDS, 2).defaults()
    partition = {"PartitionIndex": 4, "LowWatermark": 7, "LeaderLogStartOffset": 9, "ErrorCode": 0}
    body = {"ThrottleTimeMs": 0, "Topics": [{"Name": "t", "Partitions": [partition]}]}
    frame = messages.encode_response(DELETE_RECORDS, 3, 5, body)
    assert messages.decode_response(DELETE_RECORDS, 3, frame) == (5, body)
    assert messages.supported_versions(DELETE_RECORDS) == (0, 3)


def test_golden_delete_records_request_v0() -> None:
    body = {"Topics": [{"Name": "t", "Partitions": [{"PartitionIndex": 0, "Offset": 5}]}], "TimeoutMs": 1000}
    frame = messages.encode_request(messages.RequestHeader(21, 0, 1, "c"), body)
    expected = (
        b"\x00\x15\x00\x00\x00\x00\x00\x01\x00\x01c"  # key 21, v0, correlation 1, client "c"
        b"\x00\x00\x00\x01\x00\x01t"  # one topic "t"
        b"\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05"  # partition 0, offset 5
        b"\x00\x00\x03\xe8"  # TimeoutMs 1000
    )
    assert frame == expected


def test_golden_delete_records_request_v3_leader_only() -> None:
    body = {
        "Topics": [{"Name": "t", "Partitions": [{"PartitionIndex": 0, "Offset": 5}]}],
        "TimeoutMs": 1000,
        "LeaderOnly": True,
    }
    frame = messages.encode_request(messages.RequestHeader(21, 3, 1, None), body)
    expected = (
        b"\x00\x15\x00\x03\x00\x00\x00\x01\xff\xff\x00"  # header v2: null client id (int16 -1), no tags
        b"\x02\x02t"  # compact array of 1, compact string "t"
        b"\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00"  # 1 partition: 0, offset 5, no tags
        b"\x00"  # topic tags
        b"\x00\x00\x03\xe8\x01\x00"  # TimeoutMs 1000, LeaderOnly true, no tags
    )
    assert frame == expected


def test_golden_delete_records_response_v3() -> None:
    partition = {"PartitionIndex": 1, "LowWatermark": 3, "LeaderLogStartOffset": 8, "ErrorCode": 0}
    frame = messages.encode_response(21, 3, 9, {"Topics": [{"Name": "t", "Partitions": [partition]}]})
    expected = (
        b"\x00\x00\x00\x09\x00"  # correlation 9, response header v1 (tags)
        b"\x00\x00\x00\x00\x02\x02t\x02"  # ThrottleTimeMs 0, 1 topic "t", 1 partition
        b"\x00\x00\x00\x01" + struct.pack(">qqh", 3, 8, 0) + b"\x00\x00\x00"
    )
    assert frame == expected


def test_api_versions_response_uses_header_v0_even_when_flexible() -> None:
    frame = messages.encode_response(
        18, 3, 77, {"ApiKeys": [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": 4}]}
    )
    assert frame[:4] == b"\x00\x00\x00\x4d"
    assert frame[4:6] == b"\x00\x00"  # ErrorCode right after the correlation id, no header tag buffer


def _aiokafka_frame(request: object, correlation: int, client_id: str, flexible: bool) -> bytes:
    from aiokafka.protocol.api import RequestHeader_v1, RequestHeader_v2

    header_class = RequestHeader_v2 if flexible else RequestHeader_v1
    header = header_class(request, correlation_id=correlation, client_id=client_id)
    return bytes(header.encode() + request.encode())  # type: ignore[attr-defined]


def test_agrees_with_aiokafka_request_encoding() -> None:
    topics = [("orders", [(0, 10), (3, -1)]), ("audit", [(1, 0)])]
    ours = {
        "Topics": [
            {"Name": name, "Partitions": [{"PartitionIndex": p, "Offset": o} for p, o in parts]}
            for name, parts in topics
        ],
        "TimeoutMs": 30000,
    }
    theirs_v0 = DeleteRecordsRequest_v0(topics=topics, timeout_ms=30000)
    assert messages.encode_request(messages.RequestHeader(21, 0, 3, "x"), ours) == _aiokafka_frame(
        theirs_v0, 3, "x", False
    )
    no_tags: dict[int, bytes] = {}
    tagged = [(name, [(p, o, no_tags) for p, o in parts], no_tags) for name, parts in topics]
    theirs_v2 = DeleteRecordsRequest_v2(topics=tagged, timeout_ms=30000, tags={})
    assert messages.encode_request(messages.RequestHeader(21, 2, 3, "x"), ours) == _aiokafka_frame(
        theirs_v2, 3, "x", True
    )
    for version, klass in ((0, ApiVersionRequest_v0), (2, ApiVersionRequest_v2)):
        assert messages.encode_request(messages.RequestHeader(18, version, 1, "c"), {}) == _aiokafka_frame(
            klass(), 1, "c", False
        )
    metadata = MetadataRequest_v1(topics=None)
    assert messages.encode_request(messages.RequestHeader(3, 1, 2, "c"), {"Topics": None}) == _aiokafka_frame(
        metadata, 2, "c", False
    )


def test_aiokafka_decodes_our_delete_records_response() -> None:
    partitions = [{"PartitionIndex": 2, "LowWatermark": 11, "ErrorCode": 6}]
    frame = messages.encode_response(
        21, 2, 1, {"ThrottleTimeMs": 5, "Topics": [{"Name": "x", "Partitions": partitions}]}
    )
    decoded = DeleteRecordsResponse_v2.decode(frame[5:])  # skip correlation id and header tags
    assert decoded.throttle_time_ms == 5
    assert decoded.topics == [("x", [(2, 11, 6, {})], {})]


def test_supported_versions_come_from_the_schemas() -> None:
    assert messages.supported_versions(18) == (0, 4)
    assert messages.api_key("DeleteRecords") == 21
    assert messages.api_name(21) == "DeleteRecords"
    with pytest.raises(KeyError):
        messages.api_key("NoSuchApi")


def test_golden_tagged_fields_and_unknown_tags_are_skipped() -> None:
    body = {"ErrorCode": 0, "ApiKeys": [], "ThrottleTimeMs": 0, "FinalizedFeaturesEpoch": 5}
    frame = messages.encode_response(18, 3, 1, body)
    # correlation, ErrorCode, empty compact array, ThrottleTimeMs, then 1 tagged field: tag 1, 8 bytes.
    expected = b"\x00\x00\x00\x01" + b"\x00\x00" + b"\x01" + b"\x00\x00\x00\x00" + b"\x01\x01\x08"
    assert frame == expected + struct.pack(">q", 5)
    _, decoded = messages.decode_response(18, 3, frame)
    assert decoded["FinalizedFeaturesEpoch"] == 5
    assert decoded["SupportedFeatures"] == []  # absent tagged field: schema default
    with_unknown = expected[:-3] + b"\x02\x01\x08" + struct.pack(">q", 5) + b"\x1e\x03abc"  # + unknown tag 30
    assert messages.decode_response(18, 3, with_unknown)[1] == decoded


def test_arrays_of_every_fixed_type_round_trip() -> None:
    from kafka_emulator.protocol.schema import parse_spec

    fields = [
        {"name": "Ids", "type": "[]uuid", "versions": "0+"},
        {"name": "Flags", "type": "[]bool", "versions": "0+"},
        {"name": "Ratios", "type": "[]float64", "versions": "0+"},
        {"name": "Small", "type": "[]int8", "versions": "0+"},
    ]
    spec = parse_spec(
        {
            "name": "Synthetic",
            "type": "data",
            "validVersions": "0-1",
            "flexibleVersions": "1+",
            "fields": fields,
        }
    )
    value = {
        "Ids": [bytes(range(16)), bytes(16), b"\xff" * 16],
        "Flags": [True, False],
        "Ratios": [0.5, -2.25],
        "Small": [-128, 127],
    }
    for version in (0, 1):
        codec = compile_struct(spec.fields, version, version == 1)
        out: list[bytes] = []
        codec.write(value, out)
        data = b"".join(out)
        assert codec.read(data, 0) == (value, len(data))
