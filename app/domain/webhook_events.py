"""Webhooks: the deletion events they carry (``outcome_event``, ``ended_events``: those of deletions that
ended), how deliveries are signed and retried (the targets they may name: ``app.domain.webhook_targets``).

Events are CloudEvents 1.0 in structured JSON mode. A webhook subscribes to short names
(``deletion.succeeded``); the CloudEvent's ``type`` is that name under the reverse-DNS prefix
``io.kafka-purge.`` (``io.kafka-purge.deletion.succeeded``).

Deliveries are signed as the Standard Webhooks specification says: headers ``webhook-id`` (the event's
id, the same on every retry), ``webhook-timestamp`` (Unix seconds of this attempt) and
``webhook-signature`` (``v1,<base64 HMAC-SHA256>`` over ``id.timestamp.body`` with the webhook's secret,
``whsec_<base64 key>``). A receiver recomputes it and refuses an old timestamp (a replay).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from app.domain.deletion_requests import DeletionStatus, PartitionStatus

TYPE_PREFIX = "io.kafka-purge."
SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix, not a secret
SECRET_BYTES = 32
MIN_SECRET_BYTES, MAX_SECRET_BYTES = 24, 64
CONTENT_TYPE = "application/cloudevents+json; charset=utf-8"


class EventType(StrEnum):
    """The deletion events a webhook may subscribe to."""

    ACCEPTED = "deletion.accepted"
    AWAITING_APPROVAL = "deletion.awaiting_approval"
    APPROVED = "deletion.approved"
    REJECTED = "deletion.rejected"
    EXPIRED = "deletion.expired"
    SUCCEEDED = "deletion.succeeded"
    FAILED = "deletion.failed"
    PARTIALLY_FAILED = "deletion.partially_failed"

    @property
    def cloud_event_type(self) -> str:
        return TYPE_PREFIX + self.value


ALL_EVENT_TYPES = tuple(EventType)
# The terminal deletion statuses that are events (a cancelled deletion is not one).
TERMINAL_EVENTS = {
    "succeeded": EventType.SUCCEEDED,
    "failed": EventType.FAILED,
    "partially_failed": EventType.PARTIALLY_FAILED,
}


class DeliveryStatus(StrEnum):
    PENDING = "pending"  # waiting for its next attempt (or being attempted under a lease)
    DELIVERED = "delivered"  # the receiver answered 2xx
    DEAD = "dead"  # every attempt failed: dead-lettered, retried only on request


def new_secret() -> str:
    """A fresh signing secret, ``whsec_`` and the base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def secret_key(secret: str) -> bytes:
    """The HMAC key of a ``whsec_`` secret; ``ValueError`` unless it holds 24 to 64 bytes of base64."""
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError(f"a secret starts with {SECRET_PREFIX}")
    try:
        key = base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("a secret is whsec_ followed by base64") from None
    if not MIN_SECRET_BYTES <= len(key) <= MAX_SECRET_BYTES:
        raise ValueError(f"a secret's key is {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes")
    return key


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header: ``v1,`` and the base64 HMAC-SHA256 of ``id.timestamp.body``."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signed_headers(secret: str, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "content-type": CONTENT_TYPE,
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret, message_id, timestamp, body),
    }


def retry_delay(attempts: int, initial_seconds: float, max_seconds: float) -> float:
    """Seconds before the next attempt after ``attempts`` failed ones: doubling from ``initial_seconds``,
    capped at ``max_seconds``."""
    doublings: int = min(max(attempts - 1, 0), 30)
    return float(min(max_seconds, initial_seconds * (1 << doublings)))


@dataclass(frozen=True)
class DeletionEvent:
    """One deletion event to deliver: the facts its CloudEvent's ``data`` carries. ``requester`` None:
    read from the deletion when a webhook wants the event."""

    type: EventType
    deletion_id: str
    cluster: str
    status: str
    partitions: Mapping[str, int]  # partition counts by status, and ``total``
    requester: str | None = None


def cloud_event(event: DeletionEvent, event_id: str, time: datetime, requester: str) -> dict[str, Any]:
    """The CloudEvent (structured JSON mode) of ``event``."""
    return {
        "specversion": "1.0",
        "id": event_id,
        "source": f"urn:kafka-purge:cluster:{event.cluster}",
        "type": event.type.cloud_event_type,
        "subject": event.deletion_id,
        "time": time.isoformat().replace("+00:00", "Z"),
        "datacontenttype": "application/json",
        "data": {
            "deletion_id": event.deletion_id,
            "cluster": event.cluster,
            "status": event.status,
            "partitions": dict(event.partitions),
            "requester": requester,
        },
    }


def event_body(document: Mapping[str, Any]) -> str:
    """The body a delivery sends: compact JSON, the same bytes on every attempt."""
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def outcome_event(
    deletion_id: str, cluster: str, status: str, counts: Mapping[str, int]
) -> DeletionEvent | None:
    """The event of a deletion that reached the terminal ``status`` (None for one that is no event:
    cancelled)."""
    event_type = TERMINAL_EVENTS.get(status)
    if event_type is None:
        return None
    partitions = {"total": sum(counts.values()), **counts}
    return DeletionEvent(event_type, deletion_id, cluster, status, partitions)


def ended_events(
    ended: Mapping[str, tuple[DeletionStatus, Mapping[PartitionStatus, int]]], clusters: Mapping[str, str]
) -> list[DeletionEvent]:
    """The events of deletions that just ended, by id with their status and partition counts (none for a
    cancelled one)."""
    found = []
    for deletion_id, (status, counts) in ended.items():
        by_status = {s.value: n for s, n in counts.items()}
        event = outcome_event(deletion_id, clusters[deletion_id], status.value, by_status)
        if event is not None:
            found.append(event)
    return found
