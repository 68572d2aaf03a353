"""A policy's run history refuses cursors and page sizes out of range (422), on both databases."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest
from helpers.retention import policy_body

RUNS = "/v1/clusters/demo/policies/inter/runs"


def cursor(*key: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode().rstrip("=")


async def test_out_of_range_cursors_and_limits_are_422(
    client: httpx.AsyncClient, alice: dict[str, str], inter: str
) -> None:
    created = await client.post("/v1/clusters/demo/policies", json=policy_body(), headers=alice)
    assert created.status_code == 201, created.text
    queries = [f"cursor={cursor(key)}" for key in (10**30, 2**63, -1, "1")]
    queries += [f"limit={limit}" for limit in ("0", "1001", str(10**30))]
    for query in queries:
        response = await client.get(f"{RUNS}?{query}", headers=alice)
        assert response.status_code == 422, (query, response.text)
        assert response.headers["content-type"] == "application/problem+json"
    assert (await client.get(RUNS, headers=alice)).json() == {"items": [], "next_cursor": None}


@pytest.mark.parametrize("name", ["inter%00", "inter%C2%9B"])
async def test_control_characters_in_the_path_are_422(
    client: httpx.AsyncClient, alice: dict[str, str], name: str
) -> None:
    response = await client.get(f"/v1/clusters/demo/policies/{name}/runs", headers=alice)
    assert response.status_code == 422, response.text
