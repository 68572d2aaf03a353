"""Webhook rules without I/O: targets, the host allow-list, signatures (Standard Webhooks' own example),
the retry backoff, the CloudEvent."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from app.domain.webhooks import (
    DeletionEvent,
    EventType,
    HostAllowList,
    TargetRefused,
    check_target,
    cloud_event,
    event_body,
    new_secret,
    retry_delay,
    secret_key,
    signature,
)


@pytest.mark.parametrize(
    "url",
    ["https://hooks.example.com/purge", "http://127.0.0.1:8080/x?team=orders", "http://[::1]:9/h"],
)
def test_http_targets_are_accepted(url: str) -> None:
    assert check_target(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "gopher://example.com",
        "javascript:alert(1)",
        "//example.com/x",
        "https://alice:secret@example.com/x",
        "https://token@example.com/x",
        "http://example.com:99999/x",
        "https://example.com/x#fragment",
    ],
)
def test_other_targets_are_refused(url: str) -> None:
    with pytest.raises(TargetRefused):
        check_target(url)


def test_the_allow_list() -> None:
    allowed = HostAllowList.parse("hooks.example.com, *.internal.example, 10.1.0.0/16, ::1")
    assert allowed.allows_name("HOOKS.example.com")
    assert allowed.allows_name("ci.internal.example")
    assert not allowed.allows_name("internal.example.evil")
    assert allowed.allows_name("10.1.2.3")
    assert allowed.allows_name("[::1]")
    assert not allowed.allows_name("10.2.0.1")
    assert allowed.needs_resolving("other.example.org")
    assert not allowed.needs_resolving("10.2.0.1")
    assert allowed.allows_addresses(["10.1.9.9"])
    assert not allowed.allows_addresses(["10.1.9.9", "192.168.0.1"])
    assert not allowed.allows_addresses([])
    assert HostAllowList.parse("").allows_name("anything.example")
    assert not HostAllowList.parse("a.example").needs_resolving("b.example")
    with pytest.raises(ValueError, match="CIDR"):
        HostAllowList.parse("bad/host")


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
