"""Webhook rules without I/O (targets: test_webhook_targets.py): signatures (Standard Webhooks' own example),
the retry backoff, the CloudEvent."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from app.domain.webhook_events import (
    DeletionEvent,
    EventType,
    cloud_event,
    event_body,
    new_secret,
    retry_delay,
    secret_key,
    signature,
)


def test_the_signature_is_standard_webhooks() -> None:
    # The example of the Standard Webhooks specification (and of its reference libraries).
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = b'{"test": 2432232314}'
    expected = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    assert signature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body) == expected


def test_secrets() -> None:
    assert len(secret_key(new_secret())) == 32
    for bad in ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_!!!", "whsec_c2hvcnQ="):
        with pytest.raises(ValueError, match="secret"):
            secret_key(bad)


def test_backoff_doubles_up_to_its_cap() -> None:
    assert [retry_delay(n, 1.0, 10.0) for n in range(1, 7)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    assert retry_delay(10_000, 1.0, 300.0) == 300.0


def test_the_cloud_event() -> None:
    event = DeletionEvent(EventType.PARTIALLY_FAILED, "d-1", "demo", "partially_failed", {"total": 2}, None)
    at = datetime(2026, 11, 26, 12, 0, 1, 250000, tzinfo=UTC)
    document = cloud_event(event, "e-1", at, "User:alice")
    assert document == {
        "specversion": "1.0",
        "id": "e-1",
        "source": "urn:kafka-purge:cluster:demo",
        "type": "io.kafka-purge.deletion.partially_failed",
        "subject": "d-1",
        "time": "2026-11-26T12:00:01.250000Z",
        "datacontenttype": "application/json",
        "data": {
            "deletion_id": "d-1",
            "cluster": "demo",
            "status": "partially_failed",
            "partitions": {"total": 2},
            "requester": "User:alice",
        },
    }
    assert json.loads(event_body(document)) == document
