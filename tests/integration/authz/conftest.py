"""Fixtures for the authorization tests: a service whose only super user is "admin", so every other
client is decided by ACL bindings; the executor is driven by hand (``Service.execute``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from helpers.authz import CLIENTS, Service
from pydantic import SecretStr

from app.settings import AuthSettings, ClusterSettings, DatabaseSettings, Settings, WorkerSettings


@pytest.fixture
def emulator_brokers() -> int:
    """One broker is enough here: these tests are about who may, not about replication."""
    return 1


@pytest.fixture
def settings(migrated_url: str, clusters: dict[str, ClusterSettings]) -> Settings:
    return Settings(
        database=DatabaseSettings(url=migrated_url, pool_size=5),
        clusters=clusters,
        auth=AuthSettings(
            dev_issuer=True,
            dev_clients={client: SecretStr(secret) for client, secret in CLIENTS.items()},
            dev_client_groups={"auditor": ["auditors"], "carol": ["orders"]},
        ),
        worker=WorkerSettings(poll_interval_seconds=0.05, backoff_initial_ms=20, confirm_interval_ms=50),
        super_users="User:admin",
    )


@pytest.fixture
async def service(settings: Settings) -> AsyncIterator[Service]:
    """The app (no executor of its own) and an HTTP client whose socket peer is 127.0.0.1."""
    from app.main import create_app

    app = create_app(settings, run_executor=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield Service(app, client, settings)


@pytest.fixture
async def orders(emulator: Any) -> Any:
    """Topics orders.eu (2 partitions), orders.us and payments (1 each), 10 records per partition."""
    from helpers.authz import produce

    for name, partitions in (("orders.eu", 2), ("orders.us", 1), ("payments", 1)):
        emulator.create_topic(name, partitions=partitions, replication_factor=1)
        await produce(emulator.bootstrap, name, dict.fromkeys(range(partitions), 10))
    return emulator
