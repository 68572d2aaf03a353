"""Input that used to reach the database raw: control characters in bodies, query and path parameters,
and cursors or page sizes out of range. Each is a 422 problem on both databases, and changes nothing."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest
from helpers.api import assert_problem, deletion_body


@pytest.fixture
def run_executor() -> bool:
    return False


def cursor(*key: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode().rstrip("=")


def escaped(body: dict[str, Any]) -> dict[str, Any]:
    """Request arguments sending ``body`` as ASCII JSON: control characters as ``\\uXXXX`` escapes, the
    only way JSON carries most of them (raw ones make the body invalid JSON)."""
    return {"content": json.dumps(body), "headers": {"Content-Type": "application/json"}}


async def _deletion(client: httpx.AsyncClient, headers: dict[str, str], **fields: Any) -> httpx.Response:
    request = escaped(deletion_body(("orders", 0, 1), **fields))
    return await client.post(
        "/v1/deletions", content=request["content"], headers={**request["headers"], **headers}
    )


@pytest.mark.parametrize("reason", ["erasure\x00", "erasure\x1b[2J", "erasure\x7f", "erasure\x85", "\ud800"])
async def test_control_characters_in_a_body_are_refused(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str, reason: str
) -> None:
    problem = assert_problem(await _deletion(app_client, alice, reason=reason), 422)
    assert problem["errors"] == [
        {"pointer": "#/reason", "detail": "Control characters are not allowed here."}
    ]
    assert (await app_client.get("/v1/deletions", headers=alice)).json()["items"] == []


async def test_free_text_keeps_tabs_and_newlines(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str
) -> None:
    accepted = await _deletion(app_client, alice, reason="GDPR erasure\n\tticket 42\r\n")
    assert accepted.status_code == 202, accepted.text
    assert accepted.json()["reason"] == "GDPR erasure\n\tticket 42\r\n"


@pytest.mark.parametrize(
    ("method", "url", "body", "pointer"),
    [
        (
            "POST",
            "/v1/clusters/demo/acls",
            {
                "principal": "User:mallory\x00",
                "host": "*",
                "operation": "DELETE",
                "permission_type": "ALLOW",
                "resource_type": "TOPIC",
                "pattern_type": "LITERAL",
                "resource_name": "orders",
            },
            "#/principal",
        ),
        (
            "POST",
            "/v1/clusters/demo/consumers",
            {"name": "q", "checkpoint_location": "/cp\x00"},
            "#/checkpoint_location",
        ),
        (
            "PUT",
            "/v1/clusters/demo/consumers/q/progress",
            {"query_id": "q\x00", "run_id": "r", "batch_id": 1, "offsets": {"orders": {"0": 1}}},
            "#/query_id",
        ),
        ("POST", "/v1/deletions", {"cluster": "demo", "partitions": [], "reason": "x", "\x00": 1}, "#"),
    ],
)
async def test_every_body_refuses_control_characters(
    app_client: httpx.AsyncClient,
    alice: dict[str, str],
    emulator: Any,
    method: str,
    url: str,
    body: dict[str, Any],
    pointer: str,
) -> None:
    request = escaped(body)
    response = await app_client.request(
        method, url, content=request["content"], headers={**request["headers"], **alice}
    )
    assert assert_problem(response, 422)["errors"][0]["pointer"] == pointer
    audit = await app_client.get("/v1/audit", headers=alice)
    assert audit.json()["items"] == []


@pytest.mark.parametrize(
    ("url", "parameter", "where"),
    [
        ("/v1/deletions?cluster=de%00mo", "cluster", "query"),
        ("/v1/deletions?topic=orders%C2%85", "topic", "query"),
        ("/v1/deletions?status=pending&%01=x", "query", "query"),
        ("/v1/audit?action=deletion.requested%0A", "action", "query"),
        ("/v1/deletions/abc%00def", "path", "path"),
        ("/v1/deletions/abc/partitions/orders%00/0", "path", "path"),
        ("/v1/clusters/de%00mo/policies", "path", "path"),
    ],
)
async def test_control_characters_in_parameters_are_refused(
    app_client: httpx.AsyncClient, alice: dict[str, str], url: str, parameter: str, where: str
) -> None:
    problem = assert_problem(await app_client.get(url, headers=alice), 422)
    assert problem["errors"] == [
        {"parameter": parameter, "in": where, "detail": "Control characters are not allowed here."}
    ]


@pytest.mark.parametrize(
    "key",
    [[10**30], [2**63], [-1], [1.5], [True], ["1"], [1, 2]],
)
async def test_audit_cursors_out_of_range_are_refused(
    app_client: httpx.AsyncClient, alice: dict[str, str], key: list[Any]
) -> None:
    problem = assert_problem(await app_client.get(f"/v1/audit?cursor={cursor(*key)}", headers=alice), 422)
    assert problem["errors"][0]["parameter"] == "cursor"


async def test_list_cursors_out_of_range_are_refused(
    app_client: httpx.AsyncClient, alice: dict[str, str], orders: str
) -> None:
    accepted = await _deletion(app_client, alice)
    partitions = f"/v1/deletions/{accepted.json()['id']}/partitions"
    refused = [
        f"{partitions}?cursor={cursor('orders', 10**30)}",
        f"{partitions}?cursor={cursor('orders', 2**31)}",
        f"{partitions}?cursor={cursor('orders', -1)}",
        f"{partitions}?cursor={cursor('orders' + chr(0), 0)}",
        f"/v1/deletions?cursor={cursor('2026-01-01T00:00:00+00:00', 'id' + chr(0))}",
        f"/v1/deletions?cursor={cursor('2026-01-01T00:00:00+00:00', 10**30)}",
    ]
    for url in refused:
        assert (
            assert_problem(await app_client.get(url, headers=alice), 422)["errors"][0]["parameter"]
            == "cursor"
        )


@pytest.mark.parametrize("limit", ["0", "-1", "1001", str(10**30)])
async def test_page_sizes_out_of_range_are_refused(
    app_client: httpx.AsyncClient, alice: dict[str, str], limit: str
) -> None:
    for url in ("/v1/deletions", "/v1/deletions/any/partitions", "/v1/audit"):
        problem = assert_problem(await app_client.get(f"{url}?limit={limit}", headers=alice), 422)
        assert problem["errors"][0]["parameter"] == "limit"
