"""/docs, /redoc and their assets come from the service itself: the pages name no other host, and the
assets (from the fastapi-offline package) are served under /docs/assets with validators for caching."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from app.main import create_app
from app.settings import AuthSettings, DatabaseSettings, Settings

# The pages never touch the database: the engine never connects and this file is never created.
UNUSED_DB = f"sqlite+aiosqlite:///{Path(tempfile.gettempdir()) / f'kafka-purge-docs-{os.getpid()}.db'}"
ASSETS = {
    "swagger-ui-bundle.js": "javascript",
    "swagger-ui.css": "text/css",
    "redoc.standalone.js": "javascript",
    "favicon.png": "image/png",
}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    auth = AuthSettings(dev_issuer=True, dev_clients={"admin": SecretStr("admin-secret")})
    app = create_app(Settings(database=DatabaseSettings(url=UNUSED_DB), auth=auth), run_executor=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as c:
        yield c


@pytest.mark.parametrize("page", ["/docs", "/redoc", "/docs/oauth2-redirect"])
async def test_the_pages_name_no_other_host(client: httpx.AsyncClient, page: str) -> None:
    response = await client.get(page)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert re.findall(r"(?:https?:)?//[\w.-]+", response.text) == []


async def test_the_pages_load_their_assets_from_the_service(client: httpx.AsyncClient) -> None:
    docs = (await client.get("/docs")).text
    redoc = (await client.get("/redoc")).text
    assert {"/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css"} <= set(
        re.findall(r'(?:src|href)="([^"]+)"', docs)
    )
    assert '<script src="/docs/assets/redoc.standalone.js">' in redoc


async def test_redoc_may_show_images_of_the_service_only(client: httpx.AsyncClient) -> None:
    response = await client.get("/redoc")
    assert response.headers["content-security-policy"] == "img-src 'self' data:"


@pytest.mark.parametrize(("name", "kind"), ASSETS.items())
async def test_every_asset_is_served_with_validators(client: httpx.AsyncClient, name: str, kind: str) -> None:
    response = await client.get(f"/docs/assets/{name}")
    assert response.status_code == 200
    assert kind in response.headers["content-type"]
    assert len(response.content) > 1000
    again = await client.get(f"/docs/assets/{name}", headers={"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304


@pytest.mark.parametrize(
    "path", ["nope.js", "../__init__.py", "%2e%2e", "%2e", "%2e%2e/core.py", "..%2f..%2fsettings.py"]
)
async def test_anything_else_under_assets_is_a_problem_404(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(f"/docs/assets/{path}")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")
