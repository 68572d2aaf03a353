"""Bearer JWT validation against a JWKS served by a real local HTTP server (the non-dev path)."""

from __future__ import annotations

import base64
import logging
import re
import time

import pytest
from helpers.auth import ClientFactory, assert_unauthenticated, idp_settings
from helpers.auth_idp import FakeIdP, good_claims, new_key
from joserfc import jwt


def auth_header(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_valid_token_names_the_principal(idp: FakeIdP, client_for: ClientFactory) -> None:
    async with client_for(idp_settings(idp)) as (client, _):
        response = await client.get("/test/whoami", headers=auth_header(idp.sign(good_claims())))
    assert response.status_code == 200, response.text
    assert response.json() == {"names": ["User:alice"], "client_host": "127.0.0.1"}


async def test_missing_token_gets_a_bare_challenge(idp: FakeIdP, client_for: ClientFactory) -> None:
    async with client_for(idp_settings(idp)) as (client, _):
        missing = await client.get("/test/whoami")
        basic = await client.get("/test/whoami", headers={"Authorization": "Basic YTpi"})
    for response in (missing, basic):
        assert_unauthenticated(response, error=None)
        assert response.headers["www-authenticate"] == 'Bearer realm="kafka-purge"'


async def test_malformed_tokens_are_rejected(idp: FakeIdP, client_for: ClientFactory) -> None:
    good = idp.sign(good_claims())
    head, body, sig = good.split(".")
    flipped = sig[:-2] + ("A" if sig[-2] != "A" else "B") + sig[-1]
    malformed = [
        "garbage",
        f"{head}.{body}",
        f"{head}.{body}.{sig}.x.y",
        f"!!!.{body}.{sig}",
        f"{base64.urlsafe_b64encode(b'[1,2]').decode()}.{body}.{sig}",
        f"{head}.{body}.{flipped}",
        f"{head}.{body}.",
        f"{head}.{base64.urlsafe_b64encode(b'not json').decode().rstrip('=')}.{sig}",
    ]
    async with client_for(idp_settings(idp)) as (client, _):
        responses = [await client.get("/test/whoami", headers=auth_header(t)) for t in malformed]
        empty = await client.get("/test/whoami", headers={"Authorization": "Bearer "})
    for response in [*responses, empty]:
        assert_unauthenticated(response)


async def test_expiry_honours_the_30_second_leeway(idp: FakeIdP, client_for: ClientFactory) -> None:
    exp = int(time.time())
    token = idp.sign(good_claims(exp=exp, iat=exp - 60, nbf=exp - 60))
    async with client_for(idp_settings(idp)) as (client, app):
        app.state.auth.validator.clock = lambda: exp + 29
        accepted = await client.get("/test/whoami", headers=auth_header(token))
        app.state.auth.validator.clock = lambda: exp + 31
        rejected = await client.get("/test/whoami", headers=auth_header(token))
    assert accepted.status_code == 200, accepted.text
    assert_unauthenticated(rejected)
    assert "expired" in rejected.headers["www-authenticate"]


async def test_registered_claims_are_enforced(idp: FakeIdP, client_for: ClientFactory) -> None:
    now = int(time.time())
    bad_claims = [
        good_claims(exp=None),
        good_claims(exp=str(now + 300)),
        good_claims(exp=True),
        good_claims(aud="someone-else"),
        good_claims(aud=["someone-else", "another"]),
        good_claims(aud=None),
        good_claims(iss="https://evil.test/"),
        good_claims(iss=None),
        good_claims(nbf=now + 31),
        good_claims(iat=now + 31),
        good_claims(sub=None),
        good_claims(sub=""),
    ]
    async with client_for(idp_settings(idp)) as (client, app):
        app.state.auth.validator.clock = lambda: now
        responses = [await client.get("/test/whoami", headers=auth_header(idp.sign(c))) for c in bad_claims]
        listed = await client.get(
            "/test/whoami", headers=auth_header(idp.sign(good_claims(aud=["other", "kafka-purge"])))
        )
        near = await client.get("/test/whoami", headers=auth_header(idp.sign(good_claims(nbf=now + 20))))
    for claims, response in zip(bad_claims, responses, strict=True):
        assert response.status_code == 401, claims
        assert_unauthenticated(response)
    assert listed.status_code == 200
    assert near.status_code == 200


async def test_oversized_token_is_refused_before_parsing(idp: FakeIdP, client_for: ClientFactory) -> None:
    big = idp.sign(good_claims(padding="x" * 9000))
    async with client_for(idp_settings(idp)) as (client, _):
        response = await client.get("/test/whoami", headers=auth_header(big))
    assert_unauthenticated(response)
    assert "too large" in response.headers["www-authenticate"]
    assert idp.hits == 0  # refused before any key lookup


async def test_every_v1_route_requires_a_valid_token(idp: FakeIdP, client_for: ClientFactory) -> None:
    forged = jwt.encode({"alg": "RS256", "kid": "k1"}, good_claims(), new_key("k1"), algorithms=["RS256"])
    async with client_for(idp_settings(idp)) as (client, _):
        paths = (await client.get("/openapi.json")).json()["paths"]
        routes = [
            (method.upper(), re.sub(r"\{[^}]+\}", "1", path))
            for path, operations in paths.items()
            if path.startswith("/v1/")
            for method in operations
        ]
        assert len(routes) >= 5
        for method, path in routes:
            missing = await client.request(method, path, json={})
            assert_unauthenticated(missing, error=None)
            invalid = await client.request(method, path, json={}, headers=auth_header(forged))
            assert_unauthenticated(invalid)


async def test_failures_are_logged_without_the_token(
    idp: FakeIdP, client_for: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    expired = idp.sign(good_claims(exp=int(time.time()) - 3600, iat=int(time.time()) - 7200, nbf=None))
    caplog.set_level(logging.DEBUG)
    async with client_for(idp_settings(idp)) as (client, _):
        assert_unauthenticated(await client.get("/test/whoami", headers=auth_header(expired)))
    assert "The token has expired" in caplog.text
    for segment in expired.split("."):
        assert segment not in caplog.text
