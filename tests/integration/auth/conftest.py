"""Fixtures for the authentication tests: a fake IdP over real HTTP and a client over the app."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import httpx
import pytest
from fastapi import FastAPI
from helpers.auth import PEER, ClientFactory, service_app
from helpers.auth_idp import FakeIdP

from app.settings import Settings


@pytest.fixture
def idp() -> Iterator[FakeIdP]:
    server = FakeIdP().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def client_for() -> ClientFactory:
    """``async with client_for(settings) as (client, app)``: an HTTP client over the app."""

    @asynccontextmanager
    async def open_client(
        settings: Settings, peer: str = PEER
    ) -> AsyncIterator[tuple[httpx.AsyncClient, FastAPI]]:
        app = service_app(settings)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app, client=(peer, 40000))
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
                yield client, app

    return open_client
