"""OAuth 2 client credentials for calls to kafka-purge, on Authlib's httpx integration.

``ClientCredentials.client()`` is an ``httpx2.Client`` that carries a bearer token: Authlib fetches it
from the token endpoint (``client_secret_basic``) and fetches a new one once the current token is within
``leeway_s`` of its ``expires_in``. ``authorize`` gets the first token or, after the service answered 401
(a revoked token, a rotated signing key), a fresh one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx2
from authlib.integrations.httpx_client import OAuth2Client, OAuthError

__all__ = ["ClientCredentials", "OAuthError", "authorize"]


@dataclass(frozen=True)
class ClientCredentials:
    """A confidential client of the service's identity provider (client-credentials grant)."""

    token_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str | None = None
    leeway_s: int = 30

    def client(self, **options: Any) -> httpx2.Client:
        """An HTTP client that authenticates every request with a current token (``options`` go to
        ``httpx2.Client``: ``base_url``, ``timeout``, ...)."""
        return OAuth2Client(  # type: ignore[no-any-return]
            self.client_id,
            self.client_secret,
            scope=self.scope,
            token_endpoint=self.token_url,
            grant_type="client_credentials",
            leeway=self.leeway_s,
            **options,
        )


def authorize(client: httpx2.Client, *, renew: bool = False) -> None:
    """Fetch a token for ``client`` if it has none yet, or always with ``renew``; a plain
    ``httpx2.Client`` (a fixed token or none) is left as it is. Raises ``OAuthError`` when the identity
    provider refuses and ``httpx2.HTTPError`` when it cannot be reached."""
    if isinstance(client, OAuth2Client) and (renew or not client.token):
        client.fetch_token()
