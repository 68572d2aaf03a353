"""Policy regexes are RE2: matched in time linear in the topic name, capped in length, refused (422) when
they use what RE2 lacks, and never matched for an unauthenticated caller."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from helpers.retention import policy_body

from app.worker.scheduler import RetentionScheduler

POLICIES = "/v1/clusters/demo/policies"
# Backtracking engines take 2^n steps on n "a"s without the "b" (Python's re: about 20 s at 27).
REDOS = "(a|a)*b"


async def test_a_redos_regex_is_matched_in_bounded_time(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: Any, scheduler: RetentionScheduler
) -> None:
    emulator.create_topic("a" * 27, 1)
    body = policy_body("redos", topics={"regex": REDOS}, consumers={"groups": ["billing"]})
    started = time.monotonic()
    created = await client.post(POLICIES, json=body, headers=alice)
    assert created.status_code == 201, created.text
    await scheduler.run_once()
    health = await client.get("/healthz")
    assert time.monotonic() - started < 2.0
    assert health.status_code == 200
    [run] = (await client.get(f"{POLICIES}/redos/runs", headers=alice)).json()["items"]
    assert (run["status"], run["partitions_matched"]) == ("nothing_to_delete", 0)


@pytest.mark.parametrize("regex", [r"(a)\1", r"inter\.(?=a)", r"(?<!x)inter", "a" * 513, "("])
async def test_regexes_outside_re2_are_refused(
    client: httpx.AsyncClient, alice: dict[str, str], emulator: Any, regex: str
) -> None:
    body = policy_body("bad", topics={"regex": regex})
    response = await client.post(POLICIES, json=body, headers=alice)
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["errors"][0]["pointer"].startswith("#/topics")
    assert (await client.get(f"{POLICIES}/bad", headers=alice)).status_code == 404
    patched = await client.patch(f"{POLICIES}/bad", json={"topics": {"regex": regex}}, headers=alice)
    assert patched.status_code == 422


async def test_a_regex_is_never_matched_before_authentication(
    client: httpx.AsyncClient, emulator: Any
) -> None:
    emulator.create_topic("a" * 27, 1)
    body = policy_body("redos", topics={"regex": REDOS})
    started = time.monotonic()
    response = await client.post(POLICIES, json=body)
    assert response.status_code == 401
    assert time.monotonic() - started < 2.0
