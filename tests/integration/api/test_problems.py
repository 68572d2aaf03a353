"""Every error is RFC 9457 problem+json with a request id; 500s say nothing internal."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from helpers.api import PROBLEM, assert_problem

from app.main import create_app
from app.settings import Settings


@pytest.fixture
def run_executor() -> bool:
    return False


async def test_unknown_route_and_wrong_method(app_client: httpx.AsyncClient, alice: dict[str, str]) -> None:
    problem = assert_problem(await app_client.get("/v1/nothing-here", headers=alice), 404)
    assert problem["instance"] == "/v1/nothing-here"
    response = await app_client.delete("/v1/deletions", headers=alice)
    assert_problem(response, 405)
    assert response.headers["allow"]


async def test_missing_and_bad_tokens_are_401_with_a_challenge(app_client: httpx.AsyncClient) -> None:
    for headers in ({}, {"Authorization": "Bearer not-a-jwt"}, {"Authorization": "Basic YTpi"}):
        response = await app_client.get("/v1/deletions", headers=headers)
        assert_problem(response, 401)
        assert response.headers["www-authenticate"].startswith("Bearer")


async def test_request_id_is_taken_when_sane_and_made_otherwise(
    app_client: httpx.AsyncClient, alice: dict[str, str]
) -> None:
    response = await app_client.get("/v1/nothing", headers={**alice, "X-Request-ID": "abc-123"})
    assert response.headers["x-request-id"] == "abc-123"
    assert response.json()["request_id"] == "abc-123"
    for offered in ("x" * 65, "has space", "<script>"):
        response = await app_client.get("/healthz", headers={"X-Request-ID": offered})
        assert response.headers["x-request-id"] != offered
        assert len(response.headers["x-request-id"]) == 32


@pytest.fixture
async def failing_client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings, run_executor=False)

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("secret-db-password in a traceback")

    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client


async def test_500_says_nothing_internal(failing_client: httpx.AsyncClient) -> None:
    response = await failing_client.get("/boom")
    assert response.status_code == 500
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert body["type"] == "/problems/internal-error"
    assert body["request_id"]
    assert "secret" not in response.text
    assert "RuntimeError" not in response.text
