"""HTTP face of the dev issuer: RFC 6749 §4.4 client-credentials token endpoint and the JWKS."""

from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import parse_qs, unquote_plus

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from app.auth.dependency import TOKEN_PATH
from app.auth.dev_issuer import DevIssuer

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
