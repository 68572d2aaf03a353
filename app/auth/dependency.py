"""The FastAPI dependency that authenticates every /v1 request."""

from __future__ import annotations

import logging
from typing import Annotated, Any, Protocol

from fastapi import Depends, Request
from fastapi.openapi.models import OAuthFlowClientCredentials, OAuthFlows
from fastapi.security import OAuth2

from app.auth.challenge import BearerChallenge, invalid_token, missing_token
from app.auth.principal import Principal, client_host
from app.settings import Settings

log = logging.getLogger("kafka_purge.auth")

TOKEN_PATH = "/oauth/token"  # noqa: S105 - a URL path, not a secret

# Declares the scheme in OpenAPI so Swagger UI's Authorize button runs the client-credentials flow.
# auto_error=False: the 401 must be our problem+json with a proper challenge, not FastAPI's default.
bearer_scheme = OAuth2(
    flows=OAuthFlows(clientCredentials=OAuthFlowClientCredentials(tokenUrl=TOKEN_PATH, scopes={})),
    scheme_name="OAuth2",
    description="Bearer JWT. With the dev issuer on, use the client-credentials flow at /oauth/token.",
    auto_error=False,
)


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
    if settings.auth.groups_claim:
        raw = claims.get(settings.auth.groups_claim)
        if isinstance(raw, list):
            groups = tuple(dict.fromkeys(g for g in raw if isinstance(g, str) and g))
    return Principal(user=user, groups=groups, client_host=host)


def request_client_host(request: Request, settings: Settings) -> str:
    peer = request.client.host if request.client else None
    return client_host(peer, request.headers.getlist("x-forwarded-for"), settings.trusted_proxy_set())


async def current_principal(
    request: Request, authorization: Annotated[str | None, Depends(bearer_scheme)]
) -> Principal:
    """Authenticates the request's bearer token; raises a 401 ``BearerChallenge`` otherwise."""
    auth = getattr(request.app.state, "auth", None)
    if auth is None:
        raise RuntimeError("app.auth.install(app, settings) was not called")
    host = request_client_host(request, auth.settings)
    try:
        claims = await auth.validator.validate(bearer_token(authorization))
        return principal_from_claims(claims, auth.settings, host)
    except BearerChallenge as exc:
        # The reason is one of our fixed sentences; the token itself is never logged.
        log.info("authentication failed from %s: %s", host, exc.detail)
        raise


PrincipalDep = Annotated[Principal, Depends(current_principal)]
