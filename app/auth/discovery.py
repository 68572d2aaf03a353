"""OpenID Connect Discovery 1.0: where the configured issuer's users log in and where tokens are issued.

Swagger UI's login needs the issuer's authorization and token endpoints. They are read from
``<issuer>/.well-known/openid-configuration`` (or the configured discovery URL, when the service reaches
the issuer at another address than browsers do) on first use, kept for ``ttl`` seconds, and after a
failed fetch asked again only after ``failure_backoff`` seconds (the documentation then offers no
login, and the last good answer is kept if there was one). The document must name the configured
issuer; its endpoints are used as they are, by browsers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from app.urls import shown_url

log = logging.getLogger(__name__)

WELL_KNOWN_PATH = "/.well-known/openid-configuration"
MAX_DOCUMENT_BYTES = 256 * 1024


@dataclass(frozen=True)
class ProviderEndpoints:
    authorization_endpoint: str
    token_endpoint: str


def discovery_url(issuer: str) -> str:
    """Discovery §4: the issuer without a trailing slash, then the well-known path."""
    return issuer.rstrip("/") + WELL_KNOWN_PATH


def parse_document(document: Any, issuer: str) -> ProviderEndpoints:
    """The endpoints of a discovery document that names ``issuer`` exactly (Discovery §4.3)."""
    if not isinstance(document, dict):
        raise ValueError("the discovery document is not a JSON object")
    if document.get("issuer") != issuer:
        raise ValueError("the discovery document names another issuer")
    return ProviderEndpoints(
        authorization_endpoint=_endpoint(document, "authorization_endpoint"),
        token_endpoint=_endpoint(document, "token_endpoint"),
    )


def _endpoint(document: dict[str, Any], name: str) -> str:
    value = document.get(name)
    if not isinstance(value, str):
        raise ValueError(f"the discovery document has no {name}")
    parts = urlsplit(value)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise ValueError(f"the discovery document's {name} is not an http(s) URL")
    return value


class OidcDiscovery:
    """The issuer's endpoints, fetched on first use and cached (see the module docstring)."""

    def __init__(
        self,
        issuer: str,
        *,
        url: str | None = None,
        ttl: float = 3600.0,
        failure_backoff: float = 30.0,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer
        self.url = url or discovery_url(issuer)
        self.ttl = ttl
        self.failure_backoff = failure_backoff
        self.timeout = timeout
        self.fetch_count = 0
        self._clock = clock
        self._endpoints: ProviderEndpoints | None = None
        self._fetched_at = float("-inf")
        self._failed_at = float("-inf")
        self._lock = asyncio.Lock()

    async def endpoints(self) -> ProviderEndpoints | None:
        """The endpoints, or None while the issuer has never answered with a usable document."""
        if self._fresh():
            return self._endpoints
        async with self._lock:
            if not self._fresh() and self._clock() - self._failed_at >= self.failure_backoff:
                await self._fetch()
            return self._endpoints

    def _fresh(self) -> bool:
        return self._endpoints is not None and self._clock() - self._fetched_at < self.ttl

    async def _fetch(self) -> None:
        self.fetch_count += 1
        try:
            self._endpoints = parse_document(await self._download(), self.issuer)
        except (httpx.HTTPError, ValueError) as exc:
            log.warning("OpenID Connect discovery at %s failed: %s", shown_url(self.url), exc)
            self._failed_at = self._clock()
            return
        self._fetched_at = self._clock()

    async def _download(self) -> Any:
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client:
            response = await client.get(self.url, headers={"Accept": "application/json"})
        response.raise_for_status()
        if len(response.content) > MAX_DOCUMENT_BYTES:
            raise ValueError("the discovery document is too large")
        return response.json()
