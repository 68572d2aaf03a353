"""DeleteRecords v0-v3 encoding checked against the emulator's schema-driven codec (an independent
implementation generated from Kafka's JSON schemas), plus version choice and error classification."""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.adapters.kafka.codecs.delete_records import (
    DeleteRecordsRequest,
    build_struct,
    choose_version,
    decode_delete_records,
    read_response,
)
from app.adapters.kafka.error_codes import (
    ERROR_NAMES,
    Retry,
    Terminal,
    VersionUnsupported,
    classify,
    describe,
)
from app.domain.ports import TopicPartition
from kafka_emulator.protocol import messages

OFFSETS = {
    TopicPartition("orders", 2): 120,
    TopicPartition("orders", 0): 5,
    TopicPartition("audit.log", 7): -1,
    TopicPartition("é-topic", 1): 2**40,
}


def _schema_body(leader_only: bool, timeout_ms: int) -> dict[str, Any]:
    return {
        "Topics": [
            {"Name": "audit.log", "Partitions": [{"PartitionIndex": 7, "Offset": -1}]},
            {
                "Name": "orders",
                "Partitions": [{"PartitionIndex": 0, "Offset": 5}, {"PartitionIndex": 2, "Offset": 120}],
            },
            {"Name": "é-topic", "Partitions": [{"PartitionIndex": 1, "Offset": 2**40}]},
        ],
        "TimeoutMs": timeout_ms,
        "LeaderOnly": leader_only,
    }


@pytest.mark.parametrize("version", [0, 1, 2, 3])
@pytest.mark.parametrize("leader_only", [False, True])
def test_request_bytes_match_the_schema_codec(version: int, leader_only: bool) -> None:
    struct = build_struct(version, OFFSETS, 30_000, leader_only)
    ours = struct.build_request_header(correlation_id=42, client_id="kafka-purge").encode() + struct.encode()
    header = messages.RequestHeader(21, version, 42, "kafka-purge")
    body = _schema_body(leader_only, 30_000)
    if version < 3:
        del body["LeaderOnly"]
    assert ours == messages.encode_request(header, body)
    decoded_header, decoded = messages.decode_request(ours)
    assert (decoded_header.api_version, decoded_header.correlation_id) == (version, 42)
    assert decoded["TimeoutMs"] == 30_000
    assert decoded.get("LeaderOnly", False) is (leader_only and version == 3)
    assert [t["Name"] for t in decoded["Topics"]] == ["audit.log", "orders", "é-topic"]


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_response_is_read_completely(version: int) -> None:
    body = {
        "ThrottleTimeMs": 0,
        "Topics": [
            {
                "Name": "orders",
                "Partitions": [
                    {"PartitionIndex": 0, "LowWatermark": 3, "LeaderLogStartOffset": 5, "ErrorCode": 0},
                    {"PartitionIndex": 1, "LowWatermark": -1, "LeaderLogStartOffset": -1, "ErrorCode": 1},
                ],
            },
            {
                "Name": "compacted",
                "Partitions": [
                    {"PartitionIndex": 4, "LowWatermark": -1, "LeaderLogStartOffset": -1, "ErrorCode": 44}
                ],
            },
        ],
    }
    frame = messages.encode_response(21, version, 9, body)
    struct = build_struct(version, OFFSETS, 1_000, False)
    buffer = io.BytesIO(frame)
    assert struct.parse_response_header(buffer).correlation_id == 9
    answer = read_response(struct.RESPONSE_TYPE.decode(buffer))
    results = {TopicPartition(*key): value for key, value in answer.partitions.items()}
    assert answer.version == version
    llso = 5 if version == 3 else -1
    ok = results[TopicPartition("orders", 0)]
    assert (ok.low_watermark, ok.leader_log_start_offset, ok.error_code) == (3, llso, 0)
    assert results[TopicPartition("orders", 1)].error_code == 1
    assert results[TopicPartition("compacted", 4)].error_code == 44
    assert len(results) == 3


@pytest.mark.parametrize(
    ("broker", "leader_only", "expected"),
    [
        ((0, 3), False, 3),
        ((0, 3), True, 3),
        ((0, 2), False, 2),
        ((0, 1), False, 1),
        ((0, 5), False, 3),
        ((0, 5), True, 3),
        ((0, 0), False, 0),
    ],
)
def test_version_choice(broker: tuple[int, int], leader_only: bool, expected: int) -> None:
    assert choose_version(broker, leader_only=leader_only) == expected


@pytest.mark.parametrize(
    ("broker", "leader_only"), [((0, 2), True), ((0, 0), True), (None, False), ((4, 5), False)]
)
def test_version_choice_refuses(broker: tuple[int, int] | None, leader_only: bool) -> None:
    with pytest.raises(VersionUnsupported):
        choose_version(broker, leader_only=leader_only)


def test_prepare_never_downgrades_leader_only() -> None:
    request = DeleteRecordsRequest(OFFSETS, timeout_ms=1_000, leader_only=True)
    with pytest.raises(VersionUnsupported, match="v0-v2"):
        request.prepare({21: (0, 2)})
    assert request.prepare({21: (0, 3)}).API_VERSION == 3
    relaxed = DeleteRecordsRequest(OFFSETS, timeout_ms=1_000, leader_only=False)
    assert relaxed.prepare({21: (0, 2)}).API_VERSION == 2
    assert relaxed.prepare({21: (0, 3)}).leader_only is False


def test_timeout_is_clamped_to_int32() -> None:
    assert DeleteRecordsRequest(OFFSETS, timeout_ms=10**12, leader_only=False).timeout_ms == 2**31 - 1


@pytest.mark.parametrize(
    "name",
    ["NOT_LEADER_OR_FOLLOWER", "LEADER_NOT_AVAILABLE", "KAFKA_STORAGE_ERROR", "NETWORK_EXCEPTION"],
)
def test_invalid_metadata_errors_retry_after_refresh(name: str) -> None:
    assert classify(name) == Retry(refresh_metadata=True)
    assert classify(name).retriable


def test_request_timed_out_retries_on_the_same_broker() -> None:
    assert classify("REQUEST_TIMED_OUT") == Retry(refresh_metadata=False)


@pytest.mark.parametrize(
    "name",
    [
        "OFFSET_OUT_OF_RANGE",
        "POLICY_VIOLATION",
        "INVALID_TOPIC_EXCEPTION",
        "TOPIC_AUTHORIZATION_FAILED",
        "UNKNOWN_TOPIC_OR_PARTITION",
        "UNSUPPORTED_VERSION",
        "UNKNOWN_SERVER_ERROR",
        "SOMETHING_NEW",
    ],
)
def test_terminal_errors(name: str) -> None:
    assert classify(name) == Terminal()
    assert not classify(name).retriable


def test_none_is_not_classified() -> None:
    with pytest.raises(ValueError, match="success"):
        classify("NONE")


def test_every_known_error_has_a_description() -> None:
    for name in ERROR_NAMES.values():
        assert describe(name).endswith("."), name
        assert not describe(name).startswith("Kafka error"), name
    assert "cleanup.policy" in describe("POLICY_VIOLATION")
    assert "DELETE" in describe("TOPIC_AUTHORIZATION_FAILED")


def test_error_names_match_kafka_codes() -> None:
    assert ERROR_NAMES[0] == "NONE"
    assert ERROR_NAMES[44] == "POLICY_VIOLATION"
    assert ERROR_NAMES[9999] == "UNKNOWN_SERVER_ERROR"
    from kafka_emulator.protocol.errors import ErrorCode

    for code, name in ERROR_NAMES.items():
        if name in ErrorCode.__members__:
            assert ErrorCode[name] == code


topic_names = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", min_size=1, max_size=30
)
requests = st.dictionaries(
    st.builds(TopicPartition, topic_names, st.integers(0, 2**31 - 1)),
    st.integers(-(2**63), 2**63 - 1),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(
    offsets=requests,
    version=st.integers(0, 3),
    timeout_ms=st.integers(0, 2**31 - 1),
    leader_only=st.booleans(),
)
def test_any_request_decodes_to_what_was_asked(
    offsets: dict[TopicPartition, int], version: int, timeout_ms: int, leader_only: bool
) -> None:
    struct = build_struct(version, offsets, timeout_ms, leader_only)
    frame = struct.build_request_header(correlation_id=1, client_id="c").encode() + struct.encode()
    header, decoded = messages.decode_request(frame)
    assert header.api_version == version
    assert decoded["TimeoutMs"] == timeout_ms
    assert decoded.get("LeaderOnly", False) is (leader_only and version == 3)
    got = {
        TopicPartition(t["Name"], p["PartitionIndex"]): p["Offset"]
        for t in decoded["Topics"]
        for p in t["Partitions"]
    }
    assert got == offsets
    assert len(decoded["Topics"]) == len({tp.topic for tp in offsets})


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_response_decoder_refuses_bad_lengths(version: int) -> None:
    body = {
        "ThrottleTimeMs": 0,
        "Topics": [{"Name": "t", "Partitions": [{"PartitionIndex": 0, "ErrorCode": 0}]}],
    }
    frame = messages.encode_response(21, version, 1, body)
    start = 5 if version >= 2 else 4  # correlation id, then header tags on flexible versions
    assert decode_delete_records(frame, start, version).partitions["t", 0].error_code == 0
    with pytest.raises(ValueError, match="unread"):
        decode_delete_records(frame + b"\x00", start, version)
    with pytest.raises(ValueError, match="truncated"):
        decode_delete_records(frame[:-3], start, version)


def test_response_decoder_skips_tagged_fields() -> None:
    body = {
        "ThrottleTimeMs": 0,
        "Topics": [
            {
                "Name": "t",
                "Partitions": [
                    {"PartitionIndex": 2, "LowWatermark": 4, "LeaderLogStartOffset": 6, "ErrorCode": 0}
                ],
            }
        ],
    }
    plain = messages.encode_response(21, 3, 1, body)[5:]
    # Same body, with an unknown tagged field (tag 7, two bytes) after the partition's fields.
    partition_end = plain.index(bytes([0, 0, 0, 0, 0, 0, 0, 6, 0, 0])) + 10
    tagged = plain[:partition_end] + bytes([1, 7, 2, 0xAB, 0xCD]) + plain[partition_end + 1 :]
    answer = decode_delete_records(tagged, 0, 3)
    assert answer.partitions == decode_delete_records(plain, 0, 3).partitions == {("t", 2): (4, 6, 0)}


def test_a_large_request_is_logged_as_counts() -> None:
    offsets = {TopicPartition("big", p): 3 for p in range(3_333)}
    assert repr(build_struct(3, offsets, 1_000, True)) == (
        "DeleteRecordsRequestV3(topics=1, partitions=3333, timeout_ms=1000)"
    )
