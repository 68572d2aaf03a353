"""Reading an OpenID Connect discovery document: the issuer must name itself, endpoints must be http(s)."""

from __future__ import annotations

from typing import Any

import pytest

from app.auth.discovery import ProviderEndpoints, discovery_url, parse_document

ISSUER = "https://login.example/realms/ops"
DOCUMENT = {
    "issuer": ISSUER,
    "authorization_endpoint": f"{ISSUER}/protocol/openid-connect/auth",
    "token_endpoint": f"{ISSUER}/protocol/openid-connect/token",
    "jwks_uri": f"{ISSUER}/protocol/openid-connect/certs",
}


@pytest.mark.parametrize("issuer", [ISSUER, f"{ISSUER}/"])
def test_the_well_known_path_follows_the_issuer_without_its_trailing_slash(issuer: str) -> None:
    assert discovery_url(issuer) == f"{ISSUER}/.well-known/openid-configuration"


def test_the_endpoints_are_read() -> None:
    assert parse_document(DOCUMENT, ISSUER) == ProviderEndpoints(
        authorization_endpoint=f"{ISSUER}/protocol/openid-connect/auth",
        token_endpoint=f"{ISSUER}/protocol/openid-connect/token",
    )


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"issuer": "https://evil.example/realms/ops"}, "another issuer"),
        ({"issuer": f"{ISSUER}/"}, "another issuer"),
        ({"authorization_endpoint": None}, "no authorization_endpoint"),
        ({"token_endpoint": 42}, "no token_endpoint"),
        ({"authorization_endpoint": "javascript:alert(1)"}, "not an http"),
        ({"token_endpoint": "/relative/token"}, "not an http"),
    ],
)
def test_a_document_that_cannot_be_trusted_is_refused(change: dict[str, Any], reason: str) -> None:
    document = {k: v for k, v in {**DOCUMENT, **change}.items() if v is not None}
    with pytest.raises(ValueError, match=reason):
        parse_document(document, ISSUER)


def test_a_document_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(ValueError, match="not a JSON object"):
        parse_document([DOCUMENT], ISSUER)
