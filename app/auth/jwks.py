"""Where verification keys come from: a fetched, cached JWKS, or the in-process dev issuer's keys."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Protocol

import httpx
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from app.errors import ServiceUnavailable
from app.urls import shown_url

log = logging.getLogger(__name__)

MAX_JWKS_BYTES = 512 * 1024
ASYMMETRIC_KEY_TYPES = frozenset({"RSA", "EC", "OKP"})


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
