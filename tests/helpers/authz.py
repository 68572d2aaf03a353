"""Helpers for the authorization tests (imported by name: pytest puts this directory on sys.path)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from aiokafka import AIOKafkaProducer
from fastapi import FastAPI

from app.services.runtime import Runtime
from app.settings import Settings
from app.worker import Executor

CLIENTS = {
    "admin": "admin-secret",
    "alice": "alice-secret",
    "bob": "bob-secret",
    "auditor": "auditor-secret",
    "carol": "carol-secret",
}
PROBLEM = "application/problem+json"


@dataclass
class Service:
    app: FastAPI
    client: httpx.AsyncClient
    settings: Settings

    @property
    def runtime(self) -> Runtime:
        runtime: Runtime = self.app.state.runtime
        return runtime

    async def headers(self, client_id: str, **extra: str) -> dict[str, str]:
        response = await self.client.post(
            "/oauth/token", data={"grant_type": "client_credentials"}, auth=(client_id, CLIENTS[client_id])
        )
        assert response.status_code == 200, response.text
        return {"Authorization": f"Bearer {response.json()['access_token']}", **extra}

    async def grant(self, cluster: str = "demo", **fields: str) -> None:
        """Create a binding as the super user admin."""
        response = await self.client.post(
            f"/v1/clusters/{cluster}/acls", json=binding(**fields), headers=await self.headers("admin")
        )
        assert response.status_code == 201, response.text

    async def revoke(self, cluster: str = "demo", **query: str) -> list[dict[str, Any]]:
        response = await self.client.delete(
            f"/v1/clusters/{cluster}/acls", params=query, headers=await self.headers("admin")
        )
        assert response.status_code == 200, response.text
        items: list[dict[str, Any]] = response.json()["items"]
        return items

    async def audit(self, action: str) -> list[dict[str, Any]]:
        response = await self.client.get(
            "/v1/audit", params={"action": action, "limit": 1000}, headers=await self.headers("admin")
        )
        assert response.status_code == 200, response.text
        items: list[dict[str, Any]] = response.json()["items"]
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


def binding(**fields: str) -> dict[str, str]:
    """A binding body: ALLOW DELETE from any host on a LITERAL topic unless the fields say otherwise."""
    return {
        "host": "*",
        "operation": "DELETE",
        "permission_type": "ALLOW",
        "resource_type": "TOPIC",
        "pattern_type": "LITERAL",
        **fields,
    }


def deletion(*partitions: tuple[str, int, int], cluster: str = "demo") -> dict[str, Any]:
    return {
        "cluster": cluster,
        "partitions": [{"topic": t, "partition": p, "offset": o} for t, p, o in partitions],
        "reason": "authorization test",
    }


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    return body


async def produce(bootstrap: str, topic: str, counts: dict[int, int], **config: Any) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, acks="all", **config)
    await producer.start()
    try:
        for partition, count in counts.items():
            for i in range(count):
                await producer.send(topic, b"r%d" % i, partition=partition)
        await producer.flush()
    finally:
        await producer.stop()


def low_watermark(emulator: Any, topic: str, partition: int) -> int:
    """The partition's low watermark in the emulator (0 while nothing was deleted)."""
    for state in emulator.state()["topics"][topic]["partitions"]:
        if state["partition"] == partition:
            return int(state["low_watermark"])
    raise KeyError(f"{topic}-{partition}")
