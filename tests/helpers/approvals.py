"""Helpers for the four-eyes approval tests: clients with groups, a service whose only super user is
``admin`` (every other client is decided by ACL bindings and approval rules), the executor driven by
hand."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from fastapi import FastAPI
from joserfc import jwt
from pydantic import SecretStr

from app.services.runtime import Runtime
from app.settings import AuthSettings, ClusterSettings, DatabaseSettings, Settings, WorkerSettings
from app.worker import Executor
from helpers.authz import assert_problem, binding, produce

CLIENTS = {name: f"{name}-secret" for name in ("admin", "alice", "bob", "carol", "dave")}
# alice asks; bob shares alice's group; carol and dave are privacy officers.
GROUPS = {"alice": ["privacy"], "bob": ["privacy"], "carol": ["officers"], "dave": ["officers"]}
TOPIC = "customers-pii"
RULES = "/v1/clusters/demo/approval-rules"

__all__ = ["RULES", "TOPIC", "Desk", "assert_problem", "desk_for", "make_settings"]


def make_settings(migrated_url: str, clusters: dict[str, ClusterSettings]) -> Settings:
    return Settings(
        database=DatabaseSettings(url=migrated_url, pool_size=5),
        clusters=clusters,
        auth=AuthSettings(
            dev_issuer=True,
            dev_clients={client: SecretStr(secret) for client, secret in CLIENTS.items()},
            dev_client_groups=GROUPS,
        ),
        worker=WorkerSettings(poll_interval_seconds=0.05, backoff_initial_ms=20, confirm_interval_ms=50),
        super_users="User:admin",
    )


@dataclass
class Desk:
    app: FastAPI
    client: httpx.AsyncClient
    settings: Settings
    emulator: Any

    @property
    def runtime(self) -> Runtime:
        runtime: Runtime = self.app.state.runtime
        return runtime

    async def headers(self, who: str) -> dict[str, str]:
        response = await self.client.post(
            "/oauth/token", data={"grant_type": "client_credentials"}, auth=(who, CLIENTS[who])
        )
        assert response.status_code == 200, response.text
        return {"Authorization": f"Bearer {response.json()['access_token']}"}

    def headers_without_groups(self, who: str) -> dict[str, str]:
        """A valid token of ``who``, signed with the dev issuer's key, that carries no groups claim (as an
        identity provider that leaves groups out of some tokens issues them)."""
        issuer = self.app.state.auth.dev_issuer
        now = int(time.time())
        auth = self.settings.auth
        claims = {"iss": issuer.issuer, "aud": auth.audience, "iat": now, "exp": now + 300, "sub": who}
        claims[auth.principal_claim] = who
        token = jwt.encode({"alg": "RS256", "kid": issuer.key.kid}, claims, issuer.key, algorithms=["RS256"])
        return {"Authorization": f"Bearer {token}"}

    async def call(self, who: str, method: str, url: str, status: int, **kwargs: Any) -> Any:
        response = await self.client.request(method, url, headers=await self.headers(who), **kwargs)
        assert response.status_code == status, response.text
        return response.json() if response.content else None

    async def grant(self, **fields: str) -> None:
        await self.call("admin", "POST", "/v1/clusters/demo/acls", 201, json=binding(**fields))

    async def revoke(self, **query: str) -> None:
        await self.call("admin", "DELETE", "/v1/clusters/demo/acls", 200, params=query)

    async def rule(self, **fields: Any) -> dict[str, Any]:
        body = {"name": "pii", "topics": {"names": [TOPIC]}, "approvers": ["Group:officers"], **fields}
        created: dict[str, Any] = await self.call("admin", "POST", RULES, 201, json=body)
        return created

    async def request(self, who: str = "alice", offsets: tuple[int, ...] = (4, 6)) -> dict[str, Any]:
        body = {
            "cluster": "demo",
            "partitions": [{"topic": TOPIC, "partition": p, "offset": o} for p, o in enumerate(offsets)],
            "reason": "erasure request 42",
        }
        accepted: dict[str, Any] = await self.call(who, "POST", "/v1/deletions", 202, json=body)
        return accepted

    async def decide(self, who: str, deletion_id: str, decision: str, status: int = 200) -> Any:
        body = {"decision": decision, "comment": f"{who} says {decision}"}
        response = await self.client.post(
            f"/v1/deletions/{deletion_id}/approvals", json=body, headers=await self.headers(who)
        )
        if status >= 400:
            return assert_problem(response, status)
        assert response.status_code == status, response.text
        return response.json()

    async def deletion(self, deletion_id: str) -> dict[str, Any]:
        found: dict[str, Any] = await self.call("admin", "GET", f"/v1/deletions/{deletion_id}", 200)
        return found

    async def audit(self, action: str | None = None) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"limit": 1000} | ({"action": action} if action else {})
        page = await self.call("admin", "GET", "/v1/audit", 200, params=params)
        items: list[dict[str, Any]] = page["items"]
        return items

    async def execute(self) -> int:
        """One executor pass, with the service's own authorization re-check, as ``serve`` wires it."""
        runtime = self.runtime
        executor = Executor(
            runtime.sessionmaker,
            runtime.gateway,
            self.settings,
            reauthorizer=runtime.authorization,  # type: ignore[arg-type]
        )
        return await executor.run_once()

    def log_start(self, partition: int) -> int:
        for state in self.emulator.state()["topics"][TOPIC]["partitions"]:
            if state["partition"] == partition:
                return int(state["low_watermark"])
        raise KeyError(partition)


@asynccontextmanager
async def desk_for(settings: Settings, emulator: Any) -> AsyncIterator[Desk]:
    """The app (no executor of its own) with topic customers-pii (2 partitions, 10 records each), alice
    allowed to delete in it and the officers (and bob) to describe it."""
    from app.main import create_app

    emulator.create_topic(TOPIC, partitions=2, replication_factor=1)
    await produce(emulator.bootstrap, TOPIC, {0: 10, 1: 10})
    app = create_app(settings, run_executor=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            desk = Desk(app, client, settings, emulator)
            await desk.grant(principal="User:alice", resource_name=TOPIC)
            for principal in ("Group:officers", "User:bob"):
                await desk.grant(principal=principal, resource_name=TOPIC, operation="DESCRIBE")
            yield desk
