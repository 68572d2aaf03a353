"""The cache of verified tokens: only successes, never past exp plus leeway, at most 60 s, bounded."""

from __future__ import annotations

import time

import pytest
from helpers.auth_idp import AUDIENCE, ISSUER, good_claims, new_key
from joserfc import jwt
from joserfc.jwk import KeySet

from app.auth.principals import BearerChallenge
from app.auth.tokens import CACHE_SECONDS, StaticKeys, TokenValidator, VerifiedTokens
from app.settings import AuthSettings

KEY = new_key("k1")


def validator(now: list[float]) -> TokenValidator:
    settings = AuthSettings(issuer=ISSUER, audience=AUDIENCE, algorithms=["RS256"])
    return TokenValidator(settings, ISSUER, StaticKeys(KeySet([KEY])), clock=lambda: now[0])


def signed(**claims: object) -> str:
    return jwt.encode({"alg": "RS256", "kid": "k1"}, good_claims(**claims), KEY)


async def test_a_cached_token_still_expires_at_exp_plus_leeway() -> None:
    start = time.time()
    now = [start]
    check = validator(now)
    token = signed(exp=int(start) + 10)
    assert (await check.validate(token))["sub"]
    assert len(check.verified._entries) == 1
    now[0] = int(start) + 40
    assert (await check.validate(token))["sub"]  # exp + 30 s leeway, as without the cache
    now[0] = int(start) + 41
    with pytest.raises(BearerChallenge):
        await check.validate(token)


async def test_a_long_lived_token_is_checked_again_after_the_cache_bound() -> None:
    start = time.time()
    now = [start]
    check = validator(now)
    token = signed(exp=int(start) + 3600)
    await check.validate(token)
    now[0] = start + CACHE_SECONDS + 1
    assert check.verified.get(token, now[0]) is None
    await check.validate(token)
    assert check.verified.get(token, now[0]) is not None


async def test_failures_are_never_cached() -> None:
    now = [time.time()]
    check = validator(now)
    forged = signed(exp=int(now[0]) + 600)[:-4] + "AAAA"
    for _ in range(2):
        with pytest.raises(BearerChallenge):
            await check.validate(forged)
    assert len(check.verified._entries) == 0


def test_the_cache_is_bounded_and_evicts_the_least_recently_used() -> None:
    cache = VerifiedTokens(capacity=2)
    cache.put("a", "k1", {"sub": "a"}, 100.0)
    cache.put("b", "k1", {"sub": "b"}, 100.0)
    assert cache.get("a", 1.0) == ("k1", {"sub": "a"})
    cache.put("c", "k1", {"sub": "c"}, 100.0)
    assert cache.get("b", 1.0) is None
    assert cache.get("a", 1.0) == ("k1", {"sub": "a"})
    assert cache.get("c", 1.0) == ("k1", {"sub": "c"})
