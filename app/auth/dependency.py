"""The FastAPI dependency that authenticates every /v1 request."""

from __future__ import annotations

import logging
from typing import Annotated, Any, Protocol

from fastapi import Depends, Request
from fastapi.openapi.models import OAuth2 as OAuth2Model
from fastapi.openapi.models import OAuthFlowClientCredentials
from fastapi.openapi.models import OAuthFlows as OAuthFlowsModel
from fastapi.security.base import SecurityBase

from app.auth.challenge import BearerChallenge, invalid_token, missing_token
from app.auth.principal import Principal, client_host
from app.logs import principal_var
from app.settings import Settings
from app.text import has_control_character

log = logging.getLogger("kafka_purge.auth")

TOKEN_PATH = "/oauth/token"  # noqa: S105 - a URL path, not a secret
SCHEME_HELP = "Bearer JWT. With the dev issuer on, use the client-credentials flow at /oauth/token."


class ClaimsValidator(Protocol):
    async def validate(self, token: str) -> dict[str, Any]: ...


def bearer_token(authorization: str | None) -> str:
    if not authorization:
        raise missing_token()
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        raise missing_token()
    token = token.strip()
    if not token:
        raise invalid_token("The bearer token is empty")
    return token


def principal_from_claims(claims: dict[str, Any], settings: Settings, host: str) -> Principal:
    user = claims.get(settings.auth.principal_claim)
    if not isinstance(user, str) or not user:
        raise invalid_token("The token does not name a principal")
    groups: tuple[str, ...] = ()
    raw = claims.get(settings.auth.groups_claim) if settings.auth.groups_claim else None
    if raw is not None:
        # Anything but a list of names is refused: a group silently dropped could be one a DENY names.
        if not isinstance(raw, list) or not all(isinstance(g, str) and g for g in raw):
            raise invalid_token("The token's groups claim is not a list of group names")
        groups = tuple(dict.fromkeys(raw))
    # Principals are stored, audited and matched against ACLs: a control character in one is refused
    # (``app.text``), not trimmed into some other name.
    if has_control_character(user) or any(has_control_character(group) for group in groups):
        raise invalid_token("The token's principal or groups hold control characters")
    return Principal(user=user, groups=groups, client_host=host, groups_reported=raw is not None)


def request_client_host(request: Request, settings: Settings) -> str:
    peer = request.client.host if request.client else None
    return client_host(peer, request.headers.getlist("x-forwarded-for"), settings.trusted_proxy_set())


class BearerAuthentication(SecurityBase):
    """Authenticates the request's bearer token into its principal; raises a 401 ``BearerChallenge``
    otherwise (our problem+json with a proper challenge, not FastAPI's default).

    It is also the OAuth2 security scheme of the OpenAPI document, so Swagger UI's Authorize button runs
    the client-credentials flow. Being both, authentication is one dependency of each route, not a
    principal dependency over a scheme dependency: FastAPI's solving costs about as much per dependency
    as the cached token check itself."""

    def __init__(self) -> None:
        self.model = OAuth2Model(
            flows=OAuthFlowsModel(
                clientCredentials=OAuthFlowClientCredentials(tokenUrl=TOKEN_PATH, scopes={})
            ),
            description=SCHEME_HELP,
        )
        self.scheme_name = "OAuth2"

    async def __call__(self, request: Request) -> Principal:
        auth = getattr(request.app.state, "auth", None)
        if auth is None:
            raise RuntimeError("app.auth.install(app, settings) was not called")
        host = request_client_host(request, auth.settings)
        try:
            claims = await auth.validator.validate(bearer_token(request.headers.get("authorization")))
            principal = principal_from_claims(claims, auth.settings, host)
        except BearerChallenge as exc:
            # The reason is one of our fixed sentences; the token itself is never logged.
            log.info("authentication failed from %s: %s", host, exc.detail)
            raise
        if principal.groups_reported and auth.memberships is not None:
            await auth.memberships.report(principal)
        # For the rest of the request's log lines (the request's task ends with it).
        principal_var.set(principal.name)
        return principal


current_principal = BearerAuthentication()
PrincipalDep = Annotated[Principal, Depends(current_principal)]
