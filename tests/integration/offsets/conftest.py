"""Fixtures for the offset-spec, preview, guard and evidence tests (SQLite and PostgreSQL, emulator).

Authorization is not what these tests are about: "alice" is a super user here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from app.settings import Settings


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"super_users": "User:alice"})


@pytest.fixture
async def alice(token: Callable[[str], Awaitable[str]]) -> dict[str, str]:
    return {"Authorization": f"Bearer {await token('alice')}"}
