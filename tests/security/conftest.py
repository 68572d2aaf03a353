"""Fixtures of the security suite: the trusted IdP and an attacker's, each serving a JWKS over loopback
HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.auth_idp import FakeIdP


@pytest.fixture
def idp() -> Iterator[FakeIdP]:
    server = FakeIdP().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def attacker() -> Iterator[FakeIdP]:
    """Another IdP with keys of its own: what a token's jku/x5u may point to."""
    server = FakeIdP().start()
    try:
        yield server
    finally:
        server.stop()
