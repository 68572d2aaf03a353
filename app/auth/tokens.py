"""Bearer JWT validation: where verification keys come from (a fetched, cached JWKS, or the in-process
dev issuer's keys), then the signature from trusted keys only, then the registered claims."""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

import httpx
from joserfc import jwt
from joserfc.errors import ExpiredTokenError, JoseError, MissingClaimError
from joserfc.jwk import KeySet

from app.auth.principals import invalid_token
from app.errors import ServiceUnavailable
from app.settings import AuthSettings
from app.urls import shown_url

log = logging.getLogger(__name__)

MAX_JWKS_BYTES = 512 * 1024
ASYMMETRIC_KEY_TYPES = frozenset({"RSA", "EC", "OKP"})
MAX_TOKEN_BYTES = 8 * 1024
FORBIDDEN_ALGORITHMS = frozenset({"none", ""})
# Verified tokens are remembered briefly: an RS256 check and the claims registry cost more CPU than the
# rest of a small GET.
CACHE_SECONDS = 60.0
CACHE_ENTRIES = 1024


class KeySource(Protocol):
    """Verification keys of one issuer."""

    async def keys(self) -> KeySet: ...

    async def refresh_for(self, kid: str | None) -> KeySet:
        """Called when a token names a key the current set lacks; may return the same set."""
        ...


class StaticKeys:
    """A fixed key set (the dev issuer signs in-process, so no HTTP round trip)."""

    def __init__(self, key_set: KeySet) -> None:
        self._key_set = key_set

    async def keys(self) -> KeySet:
        return self._key_set

    async def refresh_for(self, kid: str | None) -> KeySet:
        return self._key_set


class JwksCache:
    """A JWKS fetched over HTTP, cached for ``ttl`` seconds.

    An unknown ``kid`` forces one refetch (keys rotate), but at most one per ``refetch_cooldown``
    seconds, so a flood of random kids cannot turn into a flood of requests to the identity provider.
    When a fetch fails the previous keys stay in use (stale on error).
    """

    def __init__(
        self,
        url: str,
        *,
        ttl: float,
        refetch_cooldown: float = 30.0,
        failure_backoff: float = 5.0,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.ttl = ttl
        self.refetch_cooldown = refetch_cooldown
        self.failure_backoff = failure_backoff
        self.timeout = timeout
        self.fetch_count = 0
        self._clock = clock
        self._key_set: KeySet | None = None
        self._fetched_at = float("-inf")
        self._forced_at = float("-inf")
        self._failed_at = float("-inf")
        self._lock = asyncio.Lock()

    async def keys(self) -> KeySet:
        if self._key_set is not None and self._clock() - self._fetched_at < self.ttl:
            return self._key_set
        async with self._lock:
            # With no keys at all, an unreachable IdP is asked again only after a pause, not per request.
            backing_off = self._key_set is None and self._clock() - self._failed_at < self.failure_backoff
            if not backing_off and (self._key_set is None or self._clock() - self._fetched_at >= self.ttl):
                await self._fetch()
            return self._require()

    async def refresh_for(self, kid: str | None) -> KeySet:
        async with self._lock:
            current = self._require()
            if kid is not None and any(key.kid == kid for key in current):
                return current  # another request already fetched it while we waited for the lock
            if self._clock() - self._forced_at < self.refetch_cooldown:
                return current
            self._forced_at = self._clock()
            await self._fetch()
            return self._require()

    def _require(self) -> KeySet:
        if self._key_set is None:
            raise ServiceUnavailable("The identity provider's signing keys cannot be fetched")
        return self._key_set

    async def _fetch(self) -> None:
        self.fetch_count += 1
        try:
            key_set = await self._download()
        except (httpx.HTTPError, ValueError, KeyError, TypeError, JoseError) as exc:
            log.warning("JWKS fetch from %s failed: %s", shown_url(self.url), type(exc).__name__)
            self._failed_at = self._clock()
            if self._key_set is not None:
                self._fetched_at = self._clock()  # keep serving the stale keys; retry after the TTL
            return
        self._key_set = key_set
        self._fetched_at = self._clock()

    async def _download(self) -> KeySet:
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client:
            response = await client.get(self.url, headers={"Accept": "application/json"})
        response.raise_for_status()
        if len(response.content) > MAX_JWKS_BYTES:
            raise ValueError("JWKS document too large")
        document = response.json()
        if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
            raise ValueError("not a JWKS document")
        # Only public asymmetric keys: a shared-secret ("oct") or private key has no place in a JWKS.
        public_only = [
            key
            for key in document["keys"]
            if isinstance(key, dict)
            and key.get("kty") in ASYMMETRIC_KEY_TYPES
            and key.get("use", "sig") == "sig"
            and "d" not in key
        ]
        return KeySet.import_key_set({"keys": public_only})


class VerifiedTokens:
    """A bounded LRU of tokens that verified, keyed by the token's SHA-256, each until a deadline: the
    key id their signature was checked with and their claims.

    Only successes are stored; a failed token is checked in full every time.
    """

    def __init__(self, capacity: int = CACHE_ENTRIES) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[bytes, tuple[float, str | None, dict[str, Any]]] = OrderedDict()

    def get(self, token: str, now: float) -> tuple[str | None, dict[str, Any]] | None:
        """The key id and (a copy of) the claims of ``token``, unless it is unknown or past its deadline."""
        key = hashlib.sha256(token.encode()).digest()
        entry = self._entries.get(key)
        if entry is None:
            return None
        valid_until, kid, claims = entry
        if now > valid_until:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return kid, dict(claims)

    def put(self, token: str, kid: str | None, claims: dict[str, Any], valid_until: float) -> None:
        key = hashlib.sha256(token.encode()).digest()
        self._entries[key] = (valid_until, kid, dict(claims))
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)


class TokenValidator:
    """Turns a compact JWS into verified claims, or raises a 401 ``BearerChallenge``."""

    def __init__(
        self,
        settings: AuthSettings,
        issuer: str,
        keys: KeySource,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        # Settings refuse "none" already; this second check keeps joserfc from ever being handed it.
        self.algorithms = [a for a in settings.algorithms if a.lower() not in FORBIDDEN_ALGORITHMS]
        if not self.algorithms:
            raise ValueError("no usable JWT algorithm configured")
        self.issuer = issuer
        self.audience = settings.audience
        self.leeway = settings.leeway_seconds
        self.keys = keys
        self.clock = clock
        self.verified = VerifiedTokens()

    async def validate(self, token: str) -> dict[str, Any]:
        if len(token) > MAX_TOKEN_BYTES:
            raise invalid_token("The token is too large")
        now = self.clock()
        # A token in the cache passed every check below with this very header. It still needs its key
        # in the current key set, so a key dropped from the JWKS stops its tokens as soon as the key
        # set is refetched.
        if (cached := self.verified.get(token, now)) is not None:
            kid, claims = cached
            if _has_key(await self.keys.keys(), kid):
                return claims
        header = _header_of(token)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise invalid_token("The token's signing algorithm is not accepted")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise invalid_token("The token's key id is malformed")
        claims = self._verify(token, await self._key_set_with(await self.keys.keys(), kid))
        exp = claims.get("exp")
        if isinstance(exp, int | float) and not isinstance(exp, bool):
            # Never beyond what the claims check itself accepts (exp plus the leeway).
            self.verified.put(token, kid, claims, min(exp + self.leeway, now + CACHE_SECONDS))
        return claims

    async def _key_set_with(self, key_set: KeySet, kid: str | None) -> KeySet:
        if not _has_key(key_set, kid):
            key_set = await self.keys.refresh_for(kid)
            if not _has_key(key_set, kid):
                raise invalid_token("The token was signed with an unknown key")
        return key_set

    def _verify(self, token: str, key_set: KeySet) -> dict[str, Any]:
        try:
            decoded = jwt.decode(token, key_set, algorithms=self.algorithms)
        except JoseError as exc:
            raise invalid_token("The token's signature is not valid") from exc
        self._check_claims(decoded.claims)
        return decoded.claims

    def _check_claims(self, claims: dict[str, Any]) -> None:
        registry = jwt.JWTClaimsRegistry(
            now=lambda: int(self.clock()),
            leeway=self.leeway,
            exp={"essential": True},
            iss={"essential": True, "value": self.issuer},
            aud={"essential": True, "value": self.audience},
        )
        try:
            registry.validate(claims)
        except ExpiredTokenError as exc:
            raise invalid_token("The token has expired") from exc
        except MissingClaimError as exc:
            raise invalid_token("The token lacks a required claim") from exc
        except JoseError as exc:
            raise invalid_token(f"The token's {_claim_name(exc)} claim is not acceptable") from exc


def _header_of(token: str) -> dict[str, Any]:
    """Reads the protected header before any key work, refusing odd-shaped input."""
    parts = token.split(".")
    if len(parts) != 3 or not all(parts[:2]):
        raise invalid_token("The token is not a compact JWS")
    try:
        raw = base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4))
        header = json.loads(raw)
    except (binascii.Error, ValueError) as exc:
        raise invalid_token("The token header is malformed") from exc
    if not isinstance(header, dict):
        raise invalid_token("The token header is malformed")
    return header


def _has_key(key_set: KeySet, kid: str | None) -> bool:
    if kid is None:
        return len(key_set.keys) == 1
    return any(key.kid == kid for key in key_set)


def _claim_name(exc: JoseError) -> str:
    claim = getattr(exc, "claim", None)
    return claim if claim in {"iss", "aud", "exp", "nbf", "iat", "sub", "jti"} else "claims"
