"""Kafka error codes and names, and what the service does about each error.

Outcomes carry Kafka's error *names* (``OFFSET_OUT_OF_RANGE``), never raw codes. ``classify`` follows
Kafka's Admin client (``DeleteRecordsHandler``): an ``InvalidMetadataException`` is retried after a
metadata refresh, a plain ``RetriableException`` (``REQUEST_TIMED_OUT``) is resent to the same broker,
everything else (including ``UNKNOWN_SERVER_ERROR``) fails the partition. One deliberate difference:
``UNKNOWN_TOPIC_OR_PARTITION`` is terminal here, because the service checked the partition exists when
it accepted the request; a partition that disappears afterwards was deleted, not delayed.
"""

from __future__ import annotations

from dataclasses import dataclass


class ErrorNames(dict[int, str]):
    """Kafka's name for each error code; ``ERROR_NAMES[code]`` of a code the table does not know is
    UNKNOWN_SERVER_ERROR, as Kafka's own client says. A lookup, not a call: decoders name the error of
    every partition of an answer (10,000 in a large Metadata)."""

    def __missing__(self, code: int) -> str:
        return "UNKNOWN_SERVER_ERROR"


# Values from Kafka's Errors.java: the codes DeleteRecords, ListOffsets, Metadata, ApiVersions and SASL
# can produce, and the group coordinator errors FindCoordinator, DescribeGroups and OffsetFetch are
# retried on (``group_queries.py``).
ERROR_NAMES = ErrorNames(
    {
        -1: "UNKNOWN_SERVER_ERROR",
        0: "NONE",
        1: "OFFSET_OUT_OF_RANGE",
        2: "CORRUPT_MESSAGE",
        3: "UNKNOWN_TOPIC_OR_PARTITION",
        5: "LEADER_NOT_AVAILABLE",
        6: "NOT_LEADER_OR_FOLLOWER",
        7: "REQUEST_TIMED_OUT",
        8: "BROKER_NOT_AVAILABLE",
        9: "REPLICA_NOT_AVAILABLE",
        13: "NETWORK_EXCEPTION",
        14: "COORDINATOR_LOAD_IN_PROGRESS",
        15: "COORDINATOR_NOT_AVAILABLE",
        16: "NOT_COORDINATOR",
        17: "INVALID_TOPIC_EXCEPTION",
        19: "NOT_ENOUGH_REPLICAS",
        29: "TOPIC_AUTHORIZATION_FAILED",
        31: "CLUSTER_AUTHORIZATION_FAILED",
        33: "UNSUPPORTED_SASL_MECHANISM",
        34: "ILLEGAL_SASL_STATE",
        35: "UNSUPPORTED_VERSION",
        42: "INVALID_REQUEST",
        44: "POLICY_VIOLATION",
        56: "KAFKA_STORAGE_ERROR",
        58: "SASL_AUTHENTICATION_FAILED",
        74: "FENCED_LEADER_EPOCH",
        75: "UNKNOWN_LEADER_EPOCH",
        78: "OFFSET_NOT_AVAILABLE",
        89: "THROTTLING_QUOTA_EXCEEDED",
        100: "UNKNOWN_TOPIC_ID",
        103: "INCONSISTENT_TOPIC_ID",
    }
)


class VersionUnsupported(Exception):
    """The broker cannot take the request version needed (for DeleteRecords: the one LeaderOnly needs);
    nothing was sent."""


@dataclass(frozen=True)
class Retry:
    """Try again later. ``refresh_metadata``: look the leader up again first (Kafka's
    InvalidMetadataException family); otherwise resend to the same broker."""

    refresh_metadata: bool

    @property
    def retriable(self) -> bool:
        return True


@dataclass(frozen=True)
class Terminal:
    """Fail the partition with the error's name and description."""

    @property
    def retriable(self) -> bool:
        return False


Retriable = Retry

# InvalidMetadataException subclasses: the leader may have moved, so refresh metadata before resending.
_RETRY_AFTER_METADATA = frozenset(
    {
        "NOT_LEADER_OR_FOLLOWER",
        "LEADER_NOT_AVAILABLE",
        "KAFKA_STORAGE_ERROR",
        "NETWORK_EXCEPTION",
        "BROKER_NOT_AVAILABLE",
        "REPLICA_NOT_AVAILABLE",
        "FENCED_LEADER_EPOCH",
        "UNKNOWN_TOPIC_ID",
        "INCONSISTENT_TOPIC_ID",
    }
)
# RetriableException but not InvalidMetadataException: same broker, after a backoff.
_RETRY_SAME_BROKER = frozenset(
    {
        "REQUEST_TIMED_OUT",
        "NOT_ENOUGH_REPLICAS",
        "UNKNOWN_LEADER_EPOCH",
        "OFFSET_NOT_AVAILABLE",
        "THROTTLING_QUOTA_EXCEEDED",
        "CORRUPT_MESSAGE",
    }
)


def classify(name: str) -> Retry | Terminal:
    """Whether an outcome's error is worth retrying. ``NONE`` is not an error: ValueError."""
    if name == "NONE":
        raise ValueError("NONE is a success, not an error to classify")
    if name in _RETRY_AFTER_METADATA:
        return Retry(refresh_metadata=True)
    if name in _RETRY_SAME_BROKER:
        return Retry(refresh_metadata=False)
    return Terminal()


_DESCRIPTIONS: dict[str, str] = {
    "NONE": "The records were deleted.",
    "UNKNOWN_SERVER_ERROR": "The broker failed with an unexpected error; Kafka's Admin client does not "
    "retry it.",
    "OFFSET_OUT_OF_RANGE": "The offset is above the partition's high watermark (or negative): "
    "Kafka only deletes records that are already committed.",
    "CORRUPT_MESSAGE": "The broker reported a corrupt message; the request may be retried.",
    "UNKNOWN_TOPIC_OR_PARTITION": "The topic or partition does not exist on the cluster (deleted, or never "
    "created).",
    "LEADER_NOT_AVAILABLE": "The partition has no leader right now (leader election in progress); "
    "retried after a metadata refresh.",
    "NOT_LEADER_OR_FOLLOWER": "The broker asked is no longer the partition's leader; retried on the new "
    "leader.",
    "REQUEST_TIMED_OUT": "The deletion did not complete within the timeout (usually a follower replica is "
    "slow to truncate); the leader may already have deleted the records. Retried.",
    "BROKER_NOT_AVAILABLE": "The broker is not available; retried after a metadata refresh.",
    "REPLICA_NOT_AVAILABLE": "A replica of the partition is not available; retried after a metadata refresh.",
    "NETWORK_EXCEPTION": "The partition's leader broker could not be reached (connection refused or lost); "
    "retried after a metadata refresh.",
    "COORDINATOR_LOAD_IN_PROGRESS": "The group's coordinator is still loading its offsets; asked again.",
    "COORDINATOR_NOT_AVAILABLE": "The group has no coordinator right now; asked again.",
    "NOT_COORDINATOR": "The broker asked no longer coordinates the group; its coordinator is found again.",
    "INVALID_TOPIC_EXCEPTION": "The topic is internal to Kafka (such as __consumer_offsets) or its name is "
    "invalid: Kafka refuses to delete records from it.",
    "NOT_ENOUGH_REPLICAS": "Too few in-sync replicas; retried.",
    "TOPIC_AUTHORIZATION_FAILED": "The service's own Kafka principal is not allowed to DELETE on this topic: "
    "a Kafka ACL granting it DELETE on the topic is missing.",
    "CLUSTER_AUTHORIZATION_FAILED": "The service's own Kafka principal lacks a cluster-level permission.",
    "UNSUPPORTED_SASL_MECHANISM": "The broker does not offer the configured SASL mechanism.",
    "ILLEGAL_SASL_STATE": "The SASL exchange with the broker went out of order.",
    "UNSUPPORTED_VERSION": "The broker does not support the request version needed (for leader_only: "
    "DeleteRecords v3); nothing was sent.",
    "INVALID_REQUEST": "The broker rejected the request as malformed.",
    "POLICY_VIOLATION": "The topic's cleanup.policy does not include 'delete' (compacted topic): "
    "Kafka refuses DeleteRecords on it.",
    "KAFKA_STORAGE_ERROR": "The leader's log directory for the partition is offline; retried after a "
    "metadata refresh (leadership should move).",
    "SASL_AUTHENTICATION_FAILED": "The broker rejected the service's SASL credentials.",
    "FENCED_LEADER_EPOCH": "The leader epoch was stale; retried after a metadata refresh.",
    "UNKNOWN_LEADER_EPOCH": "The broker does not know the leader epoch yet; retried.",
    "OFFSET_NOT_AVAILABLE": "The leader cannot answer offsets yet (new leader catching up); retried.",
    "THROTTLING_QUOTA_EXCEEDED": "The broker throttled the request; retried.",
    "UNKNOWN_TOPIC_ID": "The topic id is unknown to the broker; retried after a metadata refresh.",
    "INCONSISTENT_TOPIC_ID": "The topic id does not match the broker's; retried after a metadata refresh.",
    # Not a Kafka error: the service's own re-check before sending (app/worker/dispatch.py).
    "AUTHORIZATION_REVOKED": "The requester's DELETE permission on the topic was revoked after the deletion "
    "was accepted; nothing was sent for this partition.",
}


def describe(name: str) -> str:
    """A sentence a person understands, for the partition's error_message."""
    return _DESCRIPTIONS.get(name, f"Kafka error {name}.")
