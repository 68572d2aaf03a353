"""The development token issuer: an RS256 key generated at start, tokens for configured clients, its HTTP
face (RFC 6749 §4.4 client-credentials token endpoint and the JWKS), and its start-up guard.

The key lives in this process only (never stored): its tokens are valid on this process until it exits,
not on another instance or after a restart. Shared tokens need an OIDC provider.

The issuer is for a laptop: it listens on loopback addresses only, unless the operator says otherwise,
and its being on is logged every time the service starts."""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, unquote_plus

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from joserfc import jwt
from joserfc.jwk import KeyParameters, KeySet, RSAKey

from app.auth.principals import TOKEN_PATH
from app.settings import AuthSettings
from app.settings.diagnostics import UnsafeConfiguration

log = logging.getLogger("kafka_purge.server")

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


MAX_FORM_BYTES = 4096
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}

TOKEN_REQUEST_BODY: dict[str, Any] = {
    "required": True,
    "content": {
        "application/x-www-form-urlencoded": {
            "schema": {
                "type": "object",
                "required": ["grant_type"],
                "properties": {
                    "grant_type": {
                        "type": "string",
                        "enum": ["client_credentials"],
                        "description": "Always client_credentials",
                    },
                    "client_id": {
                        "type": "string",
                        "description": "The client's id, unless sent with HTTP Basic authentication",
                    },
                    "client_secret": {
                        "type": "string",
                        "format": "password",
                        "description": "The client's secret, unless sent with HTTP Basic authentication",
                    },
                    "scope": {"type": "string", "description": "Ignored: tokens carry the client's groups"},
                },
            }
        }
    },
}


OAUTH_ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {"type": "string", "description": "RFC 6749 error code, e.g. invalid_client"},
        "error_description": {"type": "string", "description": "What is wrong, in words"},
    },
}
TOKEN_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {
        "description": "RFC 6749 §5.2 error: invalid_request or unsupported_grant_type",
        "content": {"application/json": {"schema": OAUTH_ERROR_SCHEMA}},
    },
    401: {
        "description": "RFC 6749 §5.2 error: invalid_client (unknown client or wrong secret)",
        "content": {"application/json": {"schema": OAUTH_ERROR_SCHEMA}},
    },
}


class OAuthError(Exception):
    """An RFC 6749 §5.2 error response."""

    def __init__(self, error: str, description: str, status: int = 400, basic: bool = False) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status
        self.basic = basic

    def response(self) -> JSONResponse:
        headers = dict(NO_STORE)
        if self.basic:
            headers["WWW-Authenticate"] = 'Basic realm="kafka-purge"'
        body = {"error": self.error, "error_description": self.description}
        return JSONResponse(body, status_code=self.status, headers=headers)


def build_router(issuer: DevIssuer) -> APIRouter:
    router = APIRouter(tags=["dev token issuer"])

    @router.post(TOKEN_PATH, responses=TOKEN_RESPONSES, openapi_extra={"requestBody": TOKEN_REQUEST_BODY})
    async def issue_token(request: Request) -> JSONResponse:
        """Issues an access token for a configured client (OAuth2 client-credentials grant)."""
        try:
            form = await _read_form(request)
            client_id = _authenticated_client(request, form, issuer)
            grant = form.get("grant_type")
            if grant is None:
                raise OAuthError("invalid_request", "grant_type is required")
            if grant != "client_credentials":
                raise OAuthError("unsupported_grant_type", "only client_credentials is supported")
        except OAuthError as exc:
            return exc.response()
        body = {
            "access_token": issuer.issue(client_id),
            "token_type": "Bearer",
            "expires_in": issuer.settings.dev_token_ttl_seconds,
        }
        return JSONResponse(body, headers=NO_STORE)

    @router.get("/.well-known/jwks.json")
    async def jwks() -> dict[str, Any]:
        """The dev issuer's public signing keys."""
        return issuer.jwks()

    return router


async def _read_form(request: Request) -> dict[str, str]:
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        raise OAuthError("invalid_request", "the body must be application/x-www-form-urlencoded")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise OAuthError("invalid_request", "the request body is too large")
    try:
        fields = parse_qs(body.decode("ascii"), keep_blank_values=True, strict_parsing=False)
    except (UnicodeDecodeError, ValueError) as exc:
        raise OAuthError("invalid_request", "the body is not a valid form") from exc
    if any(len(values) > 1 for values in fields.values()):
        raise OAuthError("invalid_request", "a parameter was repeated")
    return {name: values[0] for name, values in fields.items()}


def _authenticated_client(request: Request, form: dict[str, str], issuer: DevIssuer) -> str:
    basic = _basic_credentials(request.headers.get("authorization"))
    if basic is None:
        client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        if client_id and issuer.authenticate(client_id, secret):
            return client_id
        raise OAuthError("invalid_client", "client authentication failed", 401)
    # RFC 6749 §3.2.1 lets a client name itself in the body too; a second secret would be a second method.
    if "client_secret" in form or form.get("client_id", basic[0][0]) not in {c for c, _ in basic}:
        raise OAuthError("invalid_request", "use one client authentication method, not two")
    for client_id, secret in basic:
        if client_id and issuer.authenticate(client_id, secret):
            return client_id
    raise OAuthError("invalid_client", "client authentication failed", 401, basic=True)


def _basic_credentials(authorization: str | None) -> list[tuple[str, str]] | None:
    """Candidate (client_id, secret) pairs from a Basic header, or None without one.

    RFC 6749 §2.3.1 form-urlencodes both parts before joining them, but common clients (Swagger UI
    among them) send them raw; both readings are tried, so ``+`` or ``%`` in a secret works either way.
    """
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise OAuthError("invalid_client", "malformed Basic credentials", status=401, basic=True) from exc
    client_id, sep, secret = decoded.partition(":")
    if not sep:
        raise OAuthError("invalid_client", "malformed Basic credentials", status=401, basic=True)
    candidates = [(unquote_plus(client_id), unquote_plus(secret)), (client_id, secret)]
    return list(dict.fromkeys(candidates))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name other than localhost may resolve to anything
        return False


def check_dev_issuer(auth: AuthSettings, host: str) -> None:
    """Refuses the dev issuer on a non-loopback ``host`` (unless allowed) and warns whenever it is on."""
    if not auth.dev_issuer:
        return
    if not is_loopback(host) and not auth.dev_issuer_allow_remote:
        raise UnsafeConfiguration(
            f"the development token issuer (PURGE_AUTH_DEV_ISSUER=true) would listen on {host}, which is not "
            "a loopback address: anyone reaching it could mint tokens with a dev client's secret; listen on "
            "127.0.0.1, configure an OIDC provider (PURGE_AUTH_ISSUER, PURGE_AUTH_JWKS_URL), or set "
            "PURGE_AUTH_DEV_ISSUER_ALLOW_REMOTE=true"
        )
    log.warning(
        "the development token issuer is on (PURGE_AUTH_DEV_ISSUER=true, listening on %s): every dev client "
        "secret mints tokens; use an OIDC provider in production",
        host,
    )
