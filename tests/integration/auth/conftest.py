"""Fixtures for the authentication tests: a fake IdP over real HTTP and a client over the app."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx
import pytest
from auth_idp import AUDIENCE, ISSUER, FakeIdP
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import SecretStr

from app.auth import PrincipalDep, install
from app.errors import PurgeError
from app.settings import AuthSettings, DatabaseSettings, Settings

DEV_CLIENTS = {"admin": "admin-secret", "orders-team": "orders-secret"}
PEER = "127.0.0.1"
MEMORY_DB = "sqlite+aiosqlite:///:memory:"


@pytest.fixture
def idp() -> Iterator[FakeIdP]:
    server = FakeIdP().start()
    try:
        yield server
    finally:
        server.stop()


def idp_settings(idp: FakeIdP, **auth: Any) -> Settings:
    options: dict[str, Any] = {"issuer": ISSUER, "audience": AUDIENCE, "jwks_url": idp.jwks_url, **auth}
    return Settings(
        database=DatabaseSettings(url="sqlite+aiosqlite:///:memory:"), auth=AuthSettings(**options)
    )


def dev_settings(**extra: Any) -> Settings:
    auth = AuthSettings(
        dev_issuer=True,
        dev_clients={client: SecretStr(secret) for client, secret in DEV_CLIENTS.items()},
        dev_client_groups={"orders-team": ["orders", "eu"]},
    )
    return Settings(database=DatabaseSettings(url=MEMORY_DB), auth=auth, **extra)


def minimal_app(settings: Settings) -> FastAPI:
    """The app under test: authentication installed, one route that shows the principal."""
    app = FastAPI()

    @app.exception_handler(PurgeError)
    async def problem(request: Request, exc: PurgeError) -> JSONResponse:
        body = {"type": exc.slug, "title": exc.title, "status": exc.status, "detail": exc.detail}
        headers = getattr(exc, "headers", None)
        return JSONResponse(body, exc.status, headers=headers, media_type="application/problem+json")

    install(app, settings)
    add_whoami(app)
    return app


def add_whoami(app: FastAPI) -> None:
    @app.get("/test/whoami")
    async def whoami(principal: PrincipalDep) -> dict[str, Any]:
        return {"names": list(principal.names), "client_host": principal.client_host}


ClientFactory = Callable[..., AbstractAsyncContextManager[tuple[httpx.AsyncClient, FastAPI]]]


@pytest.fixture
def client_for() -> ClientFactory:
    """``async with client_for(settings) as (client, app)``: an HTTP client over the app."""

    @asynccontextmanager
    async def open_client(
        settings: Settings, peer: str = PEER
    ) -> AsyncIterator[tuple[httpx.AsyncClient, FastAPI]]:
        app = minimal_app(settings)
        transport = httpx.ASGITransport(app=app, client=(peer, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client, app

    return open_client


def assert_unauthenticated(response: httpx.Response, error: str | None = "invalid_token") -> None:
    assert response.status_code == 401, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["status"] == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer realm="kafka-purge"')
    if error is None:
        assert "error=" not in challenge
    else:
        assert f'error="{error}"' in challenge
