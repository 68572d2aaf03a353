"""The JWKS cache: unknown kids, key rotation, refetch rate limit, identity-provider outage."""

from __future__ import annotations

import asyncio

from helpers.auth import ClientFactory, assert_unauthenticated, idp_settings
from helpers.auth_idp import FakeIdP, good_claims, new_key
from joserfc import jwt
from joserfc.jwk import OctKey


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def forged(kid: str) -> str:
    return jwt.encode({"alg": "RS256", "kid": kid}, good_claims(), new_key(kid), algorithms=["RS256"])


async def test_unknown_kid_refetches_once_then_401(idp: FakeIdP, client_for: ClientFactory) -> None:
    async with client_for(idp_settings(idp)) as (client, _):
        ok = await client.get("/test/whoami", headers=bearer(idp.sign(good_claims())))
        assert ok.status_code == 200
        assert idp.hits == 1
        unknown = await client.get("/test/whoami", headers=bearer(forged("k9")))
        assert_unauthenticated(unknown)
        assert "unknown key" in unknown.headers["www-authenticate"]
        assert idp.hits == 2


async def test_rotated_key_is_picked_up_with_one_refetch(idp: FakeIdP, client_for: ClientFactory) -> None:
    async with client_for(idp_settings(idp)) as (client, _):
        assert (await client.get("/test/whoami", headers=bearer(idp.sign(good_claims())))).status_code == 200
        idp.add_key("k3")
        idp.published.append("k3")
        response = await client.get("/test/whoami", headers=bearer(idp.sign(good_claims(), kid="k3")))
        assert response.status_code == 200, response.text
        assert idp.hits == 2


async def test_random_kid_flood_is_rate_limited(idp: FakeIdP, client_for: ClientFactory) -> None:
    tokens = [forged(f"random-{i}") for i in range(3)] * 20
    async with client_for(idp_settings(idp)) as (client, _):
        first = await client.get("/test/whoami", headers=bearer(idp.sign(good_claims())))
        assert first.status_code == 200
        responses = await asyncio.gather(*(client.get("/test/whoami", headers=bearer(t)) for t in tokens))
        for response in responses:
            assert_unauthenticated(response)
        # One initial fetch, then at most one forced refetch inside the cooldown window.
        assert idp.hits <= 2


async def test_kid_injection_values_are_only_lookups(idp: FakeIdP, client_for: ClientFactory) -> None:
    kids = ["../../dev/null", "' OR 1=1--", "k" * 4000]
    async with client_for(idp_settings(idp)) as (client, _):
        for kid in kids:
            assert_unauthenticated(await client.get("/test/whoami", headers=bearer(forged(kid))))
        no_kid = jwt.encode({"alg": "RS256"}, good_claims(), idp.keys["k1"], algorithms=["RS256"])
        # Two keys in the JWKS: a token without kid cannot pick one.
        assert_unauthenticated(await client.get("/test/whoami", headers=bearer(no_kid)))


async def test_identity_provider_outage(idp: FakeIdP, client_for: ClientFactory) -> None:
    settings = idp_settings(idp, jwks_cache_seconds=0.05)
    async with client_for(settings) as (client, _):
        assert (await client.get("/test/whoami", headers=bearer(idp.sign(good_claims())))).status_code == 200
        idp.fail = True
        await asyncio.sleep(0.1)  # past the cache TTL: the next request refetches and fails
        stale = await client.get("/test/whoami", headers=bearer(idp.sign(good_claims())))
        assert stale.status_code == 200, "cached keys keep working while the IdP is down"
        assert idp.hits >= 2


async def test_no_keys_at_all_is_503_then_recovers(idp: FakeIdP, client_for: ClientFactory) -> None:
    idp.fail = True
    token = idp.sign(good_claims())
    async with client_for(idp_settings(idp)) as (client, app):
        responses = [await client.get("/test/whoami", headers=bearer(token)) for _ in range(10)]
        assert idp.hits == 1, "an unreachable IdP is not asked again on every request"
        app.state.auth.validator.keys.failure_backoff = 0.05
        await asyncio.sleep(0.1)
        idp.fail = False
        recovered = await client.get("/test/whoami", headers=bearer(token))
    for response in responses:
        assert response.status_code == 503
        assert response.headers["content-type"].startswith("application/problem+json")
    assert recovered.status_code == 200


async def test_encryption_and_private_keys_in_the_jwks_are_ignored(
    idp: FakeIdP, client_for: ClientFactory
) -> None:
    idp.add_key("enc1")
    idp.published = ["k1", "enc1"]
    original = idp.jwks

    def jwks_with_extras() -> dict[str, object]:
        document = original()
        for key in document["keys"]:  # type: ignore[union-attr]
            if key["kid"] == "enc1":
                key["use"] = "enc"
        document["keys"].append(
            {"kty": "oct", "kid": "shared", "k": "c2hhcmVkLXNlY3JldC1vZi0zMi1ieXRlcy1sb25nISE"}
        )  # type: ignore[union-attr]
        return document

    idp.jwks = jwks_with_extras  # type: ignore[method-assign]
    async with client_for(idp_settings(idp, algorithms=["RS256", "HS256"])) as (client, _):
        ok = await client.get("/test/whoami", headers=bearer(idp.sign(good_claims())))
        enc = await client.get("/test/whoami", headers=bearer(idp.sign(good_claims(), kid="enc1")))
        hs = jwt.encode(
            {"alg": "HS256", "kid": "shared"},
            good_claims(),
            OctKey.import_key(b"shared-secret-of-32-bytes-long!!"),
        )
        shared = await client.get("/test/whoami", headers=bearer(hs))
    assert ok.status_code == 200
    assert_unauthenticated(enc)
    assert_unauthenticated(shared)


async def test_header_key_injection_is_never_fetched(idp: FakeIdP, client_for: ClientFactory) -> None:
    attacker = FakeIdP().start()
    try:
        key = attacker.keys["k1"]
        public = dict(key.as_dict(private=False))
        headers = [
            {"jku": attacker.jwks_url},
            {"x5u": attacker.jwks_url},
            {"jwk": public},
        ]
        async with client_for(idp_settings(idp)) as (client, _):
            for extra in headers:
                token = jwt.encode(
                    {"alg": "RS256", "kid": "k1", **extra}, good_claims(), key, algorithms=["RS256"]
                )
                assert_unauthenticated(await client.get("/test/whoami", headers=bearer(token)))
        assert attacker.hits == 0
    finally:
        attacker.stop()


async def test_removed_key_stops_working_after_the_cache_ttl(idp: FakeIdP, client_for: ClientFactory) -> None:
    token = idp.sign(good_claims(), kid="k1")
    async with client_for(idp_settings(idp, jwks_cache_seconds=0.2)) as (client, _):
        assert (await client.get("/test/whoami", headers=bearer(token))).status_code == 200
        idp.published = ["k2"]

        async def rejected() -> bool:
            return (await client.get("/test/whoami", headers=bearer(token))).status_code == 401

        deadline = asyncio.get_running_loop().time() + 10
        while not await rejected():
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.05)
        assert (
            await client.get("/test/whoami", headers=bearer(idp.sign(good_claims(), kid="k2")))
        ).status_code == 200
