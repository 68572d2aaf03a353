"""The development token issuer: an RS256 key generated at start, and tokens for configured clients.

The key lives in this process only (never stored): its tokens are valid on this process until it exits,
not on another instance or after a restart. Shared tokens need an OIDC provider."""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from typing import Any

from joserfc import jwt
from joserfc.jwk import KeyParameters, KeySet, RSAKey

from app.settings import AuthSettings

SIGNING_ALGORITHM = "RS256"


class DevIssuer:
    """Signs client-credentials access tokens for the clients listed in settings."""

    def __init__(
        self, settings: AuthSettings, issuer: str, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.settings = settings
        self.issuer = issuer
        self.clock = clock
        params: KeyParameters = {"kid": f"dev-{secrets.token_hex(8)}", "use": "sig", "alg": SIGNING_ALGORITHM}
        self.key = RSAKey.generate_key(2048, parameters=params)
        self.public_keys = KeySet([RSAKey.import_key(self.key.as_dict(private=False))])

    def jwks(self) -> dict[str, Any]:
        return dict(self.public_keys.as_dict(private=False))

    def authenticate(self, client_id: str, client_secret: str) -> bool:
        expected = self.settings.dev_clients.get(client_id)
        if expected is None:
            # Compare anyway so an unknown client id costs the same as a wrong secret.
            hmac.compare_digest(client_secret.encode(), secrets.token_bytes(16))
            return False
        return hmac.compare_digest(client_secret.encode(), expected.get_secret_value().encode())

    def issue(self, client_id: str) -> str:
        now = int(self.clock())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": client_id,
            "aud": self.settings.audience,
            "iat": now,
            "nbf": now,
            "exp": now + self.settings.dev_token_ttl_seconds,
            "jti": secrets.token_urlsafe(16),
            "client_id": client_id,
        }
        claims[self.settings.principal_claim] = client_id
        if self.settings.groups_claim:  # the issuer knows every client's groups: none is an empty claim
            claims[self.settings.groups_claim] = list(self.settings.dev_client_groups.get(client_id, ()))
        header = {"alg": SIGNING_ALGORITHM, "kid": self.key.kid, "typ": "at+jwt"}
        return jwt.encode(header, claims, self.key, algorithms=[SIGNING_ALGORITHM])
