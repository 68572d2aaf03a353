"""Fail closed: when the audit event cannot be written, the deletion is not accepted either."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from helpers.api import PROBLEM, deletion_body
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.adapters.db.models import Deletion, PartitionDeletion
from app.main import create_app
from app.settings import Settings


@pytest.fixture
async def lenient_client(settings: Settings, emulator: Any) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings, run_executor=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client


async def test_no_deletion_without_its_audit_event(
    lenient_client: httpx.AsyncClient,
    alice_token_for: Callable[[httpx.AsyncClient], Awaitable[dict[str, str]]],
    orders: str,
    tamper: Callable[[str], Awaitable[None]],
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    headers = await alice_token_for(lenient_client)
    await tamper("DELETE FROM audit_head")
    response = await lenient_client.post("/v1/deletions", json=deletion_body((orders, 0, 1)), headers=headers)
    assert response.status_code == 503
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["type"] == "/problems/audit-chain-broken"
    async with sessionmaker() as session:
        assert (await session.execute(select(func.count()).select_from(Deletion))).scalar_one() == 0
        assert (await session.execute(select(func.count()).select_from(PartitionDeletion))).scalar_one() == 0
