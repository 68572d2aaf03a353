"""Assembles authentication from settings and installs it on the FastAPI app."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from fastapi import FastAPI

from app.auth.browser_login import BrowserLogin
from app.auth.dev_issuer import DevIssuer, build_router
from app.auth.principals import Principal
from app.auth.tokens import JwksCache, KeySource, StaticKeys, TokenValidator
from app.settings import Settings


class MembershipReports(Protocol):
    """Where the groups a validated token reports for its principal are kept (four-eyes approval reads
    them for a requester whatever token the requester asked with)."""

    async def report(self, principal: Principal) -> None: ...


@dataclass
class AuthComponents:
    settings: Settings
    validator: TokenValidator
    dev_issuer: DevIssuer | None
    browser_login: BrowserLogin | None = None
    memberships: MembershipReports | None = None
    # ``PURGE_TRUSTED_PROXIES`` parsed once: every authenticated request reads it.
    trusted_proxies: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.trusted_proxies = self.settings.trusted_proxy_set()


DEV_ISSUER_PATH = "/dev-issuer"


def dev_issuer_name(settings: Settings) -> str:
    """The dev issuer's own ``iss``: a URL under the service's, never a production issuer's name."""
    return settings.public_url.rstrip("/") + DEV_ISSUER_PATH


def expected_issuer(settings: Settings) -> str:
    """The one ``iss`` the validator accepts: the dev issuer's, or the configured production issuer's
    (settings refuse the two together, and production without ``PURGE_AUTH_ISSUER``)."""
    if settings.auth.dev_issuer:
        return dev_issuer_name(settings)
    if not settings.auth.issuer:
        raise ValueError("PURGE_AUTH_ISSUER is required without the dev issuer")
    return settings.auth.issuer


def build_auth(settings: Settings) -> AuthComponents:
    """The validator, trusting the in-process dev issuer's keys when it is on, else the configured JWKS."""
    issuer = expected_issuer(settings)
    dev_issuer: DevIssuer | None = None
    keys: KeySource
    login = BrowserLogin(settings.auth, issuer) if settings.auth.ui_client_id else None
    if settings.auth.dev_issuer:
        dev_issuer = DevIssuer(settings.auth, issuer)
        keys = StaticKeys(dev_issuer.public_keys)
    else:
        if not settings.auth.jwks_url:
            raise ValueError("PURGE_AUTH_JWKS_URL is required without the dev issuer")
        keys = JwksCache(settings.auth.jwks_url, ttl=settings.auth.jwks_cache_seconds)
    return AuthComponents(settings, TokenValidator(settings.auth, issuer, keys), dev_issuer, login)


def install(app: FastAPI, settings: Settings, components: AuthComponents | None = None) -> AuthComponents:
    """Puts the validator on ``app.state.auth``; with the dev issuer, mounts its routes and Swagger wiring;
    with a UI client id, Swagger UI's login (the scheme itself is added per request, ``app.api.docs``)."""
    auth = components or build_auth(settings)
    app.state.auth = auth
    if auth.dev_issuer is not None:
        app.include_router(build_router(auth.dev_issuer))
        app.swagger_ui_init_oauth = {"appName": "kafka-purge", "scopes": ""}
    else:
        _declare_plain_bearer(app)
    if auth.browser_login is not None:
        app.swagger_ui_init_oauth = auth.browser_login.swagger_init_oauth()
    return auth


def _declare_plain_bearer(app: FastAPI) -> None:
    """Without the dev issuer there is no local token endpoint: document a plain bearer scheme instead."""
    build: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        schema = build()
        schemes = schema.get("components", {}).get("securitySchemes", {})
        if "OAuth2" in schemes:
            schemes["OAuth2"] = {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
