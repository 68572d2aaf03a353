"""The reverse proxy configuration the README's deployment section points to keeps what the service does
not: a deadline for a request's head, besides one for its body and the body-size limit the service's
default allows (``deploy/nginx/kafka-purge.conf``; no nginx runs in CI, so it is read as text)."""

from __future__ import annotations

import re
from pathlib import Path

from app.settings import LimitSettings

CONF = (Path(__file__).resolve().parents[2] / "deploy" / "nginx" / "kafka-purge.conf").read_text(
    encoding="utf-8"
)


def directive(name: str) -> str:
    found = re.findall(rf"^\s*{name}\s+([^;]+);", CONF, flags=re.MULTILINE)
    assert len(found) == 1, f"{name} is set {len(found)} times"
    return str(found[0]).strip()


def seconds(value: str) -> float:
    number, unit = re.fullmatch(r"(\d+)(s|m)?", value).groups()  # type: ignore[union-attr]
    return float(number) * (60 if unit == "m" else 1)


def test_the_proxy_keeps_a_deadline_for_the_head_and_the_body() -> None:
    assert 0 < seconds(directive("client_header_timeout")) <= 60
    assert 0 < seconds(directive("client_body_timeout")) <= LimitSettings().body_timeout_seconds


def test_the_proxy_buffers_whole_requests_no_larger_than_the_service_takes() -> None:
    assert directive("proxy_request_buffering") == "on"
    assert directive("client_max_body_size") == f"{LimitSettings().max_body_bytes // 1_048_576}m"
