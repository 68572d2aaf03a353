"""Webhooks: the deletion events they carry, the targets they may name, how deliveries are signed and
retried.

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
import ipaddress
import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

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


class TargetRefused(ValueError):
    """A webhook target URL the service will not call."""


def check_target(url: str) -> str:
    """``url`` if it is an absolute http(s) URL with a host and no credentials; else ``TargetRefused``."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise TargetRefused(f"not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise TargetRefused("only http and https URLs are allowed")
    if not parts.hostname:
        raise TargetRefused("the URL needs a host")
    if parts.username is not None or parts.password is not None:
        raise TargetRefused("the URL must not carry credentials (the deliveries are signed instead)")
    if parts.fragment:
        raise TargetRefused("the URL must not have a fragment")
    if port == 0:
        raise TargetRefused("the URL's port must not be 0")
    return url


def target_host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


@dataclass(frozen=True)
class HostAllowList:
    """Which hosts webhooks may target (``PURGE_WEBHOOKS_ALLOWED_HOSTS``): exact names, ``*.suffix``
    names, and IP networks (CIDR). Empty: every host."""

    names: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()

    @classmethod
    def parse(cls, text: str) -> HostAllowList:
        names: set[str] = set()
        suffixes: list[str] = []
        networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in (e.strip().lower() for e in text.split(",")):
            if not entry:
                continue
            if entry.startswith("*."):
                suffixes.append(entry[1:])
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                if not all(part and len(part) <= 63 for part in entry.split(".")) or "/" in entry:
                    raise ValueError(f"not a host name, *.suffix or CIDR: {entry!r}") from None
                names.add(entry)
        return cls(frozenset(names), tuple(suffixes), tuple(networks))

    @property
    def open(self) -> bool:
        return not (self.names or self.suffixes or self.networks)

    def allows_name(self, host: str) -> bool:
        """Whether ``host`` (a name or an IP literal) is allowed without resolving it."""
        host = host.lower().strip("[]")
        if self.open or host in self.names or any(host.endswith(s) for s in self.suffixes):
            return True
        address = _address(host)
        return address is not None and self.allows_addresses([str(address)])

    def allows_addresses(self, addresses: Iterable[str]) -> bool:
        """Whether every address (what a host name resolved to) lies in an allowed network."""
        found = [_address(a) for a in addresses]
        return bool(found) and all(
            a is not None and any(a in network for network in self.networks) for a in found
        )

    def needs_resolving(self, host: str) -> bool:
        """Whether deciding on ``host`` takes resolving it: a name matched by no name entry, with
        networks listed."""
        return not self.allows_name(host) and bool(self.networks) and _address(host.strip("[]")) is None


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return None


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
