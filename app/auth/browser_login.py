"""Human login in Swagger UI: OAuth2 authorization code with PKCE (RFC 7636) at the configured issuer.

The user signs in on the identity provider's own page; Swagger UI exchanges the code for an access
token at the provider's token endpoint (a public client: no secret, the PKCE verifier instead) and sends
that token as a bearer token, validated like any other (its groups become ``Group:`` principals).
"""

from __future__ import annotations

from typing import Any

from app.auth.discovery import OidcDiscovery
from app.settings import AuthSettings

SCHEME_HELP = (
    "Log in at the identity provider (OAuth2 authorization code with PKCE); the access token is then "
    "sent as a bearer token."
)


class BrowserLogin:
    """Swagger UI's login settings and, once discovered, the OpenAPI security scheme that drives it."""

    def __init__(self, settings: AuthSettings, issuer: str) -> None:
        if not settings.ui_client_id:
            raise ValueError("PURGE_AUTH_UI_CLIENT_ID is required for the browser login")
        self.client_id = settings.ui_client_id
        self.scopes = settings.ui_scopes.split()
        self.discovery = OidcDiscovery(issuer, url=settings.discovery_url)

    def swagger_init_oauth(self) -> dict[str, Any]:
        """Swagger UI's ``initOAuth``: the public client, PKCE, and the scopes ticked in advance."""
        return {
            "appName": "kafka-purge",
            "clientId": self.client_id,
            "scopes": " ".join(self.scopes),
            "usePkceWithAuthorizationCodeGrant": True,
        }

    async def security_scheme(self) -> dict[str, Any] | None:
        """The authorization-code scheme at the discovered endpoints; None while they are unknown."""
        endpoints = await self.discovery.endpoints()
        if endpoints is None:
            return None
        flow = {
            "authorizationUrl": endpoints.authorization_endpoint,
            "tokenUrl": endpoints.token_endpoint,
            "scopes": dict.fromkeys(self.scopes, ""),
        }
        return {"type": "oauth2", "description": SCHEME_HELP, "flows": {"authorizationCode": flow}}
