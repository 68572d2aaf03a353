"""Helpers of the authentication tests: settings for a fake IdP or the dev issuer, the app with a
``/test/whoami`` route, and the 401 checks."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from pydantic import SecretStr

from app.auth import PrincipalDep
from app.main import create_app
from app.settings import AuthSettings, DatabaseSettings, Settings
from helpers.auth_idp import AUDIENCE, ISSUER, FakeIdP

DEV_CLIENTS = {"admin": "admin-secret", "orders-team": "orders-secret"}
PEER = "127.0.0.1"
# The auth tests never touch the database, so the engine never connects and this file is never created.
UNUSED_DB = f"sqlite+aiosqlite:///{Path(tempfile.gettempdir()) / f'kafka-purge-auth-{os.getpid()}.db'}"


def idp_settings(idp: FakeIdP, **auth: Any) -> Settings:
    options: dict[str, Any] = {"issuer": ISSUER, "audience": AUDIENCE, "jwks_url": idp.jwks_url, **auth}
    return Settings(database=DatabaseSettings(url=UNUSED_DB), auth=AuthSettings(**options))


def dev_settings(**extra: Any) -> Settings:
    auth = AuthSettings(
        dev_issuer=True,
        dev_clients={client: SecretStr(secret) for client, secret in DEV_CLIENTS.items()},
        dev_client_groups={"orders-team": ["orders", "eu"]},
    )
    return Settings(database=DatabaseSettings(url=UNUSED_DB), auth=auth, **extra)


def service_app(settings: Settings) -> FastAPI:
    """The real app (problem handlers, middleware, auth) plus one route that shows the principal."""
    app = create_app(settings, run_executor=False)
    add_whoami(app)
    return app


def add_whoami(app: FastAPI) -> None:
    @app.get("/test/whoami")
    async def whoami(principal: PrincipalDep) -> dict[str, Any]:
        return {"names": list(principal.names), "client_host": principal.client_host}


ClientFactory = Callable[..., AbstractAsyncContextManager[tuple[httpx.AsyncClient, FastAPI]]]


def assert_unauthenticated(response: httpx.Response, error: str | None = "invalid_token") -> None:
    assert response.status_code == 401, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["status"] == 401
    assert problem["type"].endswith("not-authenticated")
    assert problem["request_id"]
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer realm="kafka-purge"')
    if error is None:
        assert "error=" not in challenge
    else:
        assert f'error="{error}"' in challenge
