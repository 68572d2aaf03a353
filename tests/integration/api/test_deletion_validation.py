"""Every malformed deletion request is a 422 (or 400/415) problem that names the field, echoes nothing,
and stores nothing. Validation runs before the cluster is asked, so no emulator is needed here."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from helpers.api import assert_problem, deletion_body

MARKER = "ZZMARKERZZ"


@pytest.fixture
def run_executor() -> bool:
    return False


def _with_partition(**changes: Any) -> dict[str, Any]:
    partition = {"topic": "orders", "partition": 0, "offset": 5, **changes}
    return {**deletion_body(), "partitions": [partition]}


# Empty, dot names, too long, trailing newline, KELVIN SIGN, long s, NUL, space, fullwidth 1, RTL override.
BAD_TOPICS = ("", ".", "..", "a" * 250, f"{MARKER}\n", "\u212a", "\u017f", "a\x00b", "a b", "\uff11")
BAD_TOPICS += ("a\u202eb", 7)

BAD_BODIES: list[tuple[str, dict[str, Any], str]] = [
    *[
        (f"partition={v!r}", _with_partition(partition=v), "#/partitions/0/partition")
        for v in (-1, 2**31, 1.5, "1", True)
    ],
    *[
        (f"offset={v!r}", _with_partition(offset=v), "#/partitions/0/offset")
        for v in (-2, 2**63, 1e-3, 9.5, True, "5")
    ],
    *[(f"topic={v!r}", _with_partition(topic=v), "#/partitions/0/topic") for v in BAD_TOPICS],
    (
        "reason missing",
        {k: v for k, v in deletion_body(("orders", 0, 1)).items() if k != "reason"},
        "#/reason",
    ),
    ("reason empty", deletion_body(("orders", 0, 1), reason=""), "#/reason"),
    ("reason blank", deletion_body(("orders", 0, 1), reason="   "), "#/reason"),
    ("reason too long", deletion_body(("orders", 0, 1), reason=MARKER * 101), "#/reason"),
    ("extra top-level field", deletion_body(("orders", 0, 1), owner=MARKER), "#/owner"),
    ("no offset spec", _with_partition(offset=None), "#/partitions/0"),
    ("extra partition field", _with_partition(status="succeeded"), "#/partitions/0/status"),
    ("leader_only=1", deletion_body(("orders", 0, 1), leader_only=1), "#/leader_only"),
    ("leader_only='true'", deletion_body(("orders", 0, 1), leader_only="true"), "#/leader_only"),
    ("timeout_ms=0", deletion_body(("orders", 0, 1), timeout_ms=0), "#/timeout_ms"),
    ("timeout_ms=true", deletion_body(("orders", 0, 1), timeout_ms=True), "#/timeout_ms"),
    ("timeout_ms over max", deletion_body(("orders", 0, 1), timeout_ms=600_001), "#/timeout_ms"),
    ("no partitions", deletion_body(), "#/partitions"),
    ("partitions not a list", {**deletion_body(), "partitions": {"topic": "orders"}}, "#/partitions"),
    ("duplicate partition", deletion_body(("orders", 0, 1), ("orders", 0, 2)), "#/partitions/1"),
    (
        "cluster missing",
        {k: v for k, v in deletion_body(("orders", 0, 1)).items() if k != "cluster"},
        "#/cluster",
    ),
    ("body not an object", [1, 2], "#"),
]

BAD_RAW: list[tuple[str, bytes]] = [
    ("NaN", b'{"cluster":"demo","partitions":[{"topic":"t","partition":0,"offset":NaN}],"reason":"r"}'),
    (
        "Infinity",
        b'{"cluster":"demo","partitions":[{"topic":"t","partition":0,"offset":Infinity}],"reason":"r"}',
    ),
    ("1e400", b'{"cluster":"demo","partitions":[{"topic":"t","partition":0,"offset":1e400}],"reason":"r"}'),
    ("duplicate key", b'{"cluster":"demo","cluster":"other","partitions":[],"reason":"r"}'),
    ("BOM", b'\xef\xbb\xbf{"cluster":"demo","partitions":[],"reason":"r"}'),
    ("invalid UTF-8", b'{"cluster":"\xff\xfe","partitions":[],"reason":"r"}'),
    ("not JSON", MARKER.encode() + b"{"),
    ("truncated", b'{"cluster":"demo",'),
    ("deep nesting", b"[" * 100_000 + b"]" * 100_000),
]


async def _assert_nothing_stored(client: httpx.AsyncClient, headers: dict[str, str]) -> None:
    listed = await client.get("/v1/deletions", headers=headers)
    assert listed.json()["items"] == []
    audit = await client.get("/v1/audit", headers=headers)
    assert audit.json()["items"] == []


async def test_bad_bodies_are_422_naming_the_field(
    app_client: httpx.AsyncClient, alice: dict[str, str]
) -> None:
    failures = []
    for name, body, pointer in BAD_BODIES:
        response = await app_client.post("/v1/deletions", json=body, headers=alice)
        if response.status_code != 422:
            failures.append(f"{name}: {response.status_code}")
            continue
        problem = assert_problem(response, 422)
        pointers = [e.get("pointer") for e in problem["errors"]]
        if pointer not in pointers:
            failures.append(f"{name}: {pointers}")
        if MARKER in response.text or any("input" in e for e in problem["errors"]):
            failures.append(f"{name}: echoes the input")
    assert failures == []
    await _assert_nothing_stored(app_client, alice)


async def test_malformed_json_is_422_without_echo(
    app_client: httpx.AsyncClient, alice: dict[str, str]
) -> None:
    headers = {**alice, "content-type": "application/json"}
    for name, raw in BAD_RAW:
        response = await app_client.post("/v1/deletions", content=raw, headers=headers)
        problem = assert_problem(response, 422)
        assert problem["errors"][0]["pointer"] == "#", name
        assert MARKER not in response.text, name
        assert len(response.content) < 2_000, name
    await _assert_nothing_stored(app_client, alice)


async def test_non_json_media_type_is_415(app_client: httpx.AsyncClient, alice: dict[str, str]) -> None:
    body = json.dumps(deletion_body(("orders", 0, 1)))
    response = await app_client.post(
        "/v1/deletions", content=body, headers={**alice, "content-type": "text/plain"}
    )
    assert_problem(response, 415)


async def test_too_many_partitions_is_422(app_client: httpx.AsyncClient, alice: dict[str, str]) -> None:
    body = deletion_body(*((f"t{i % 7}", i, 1) for i in range(10_001)))
    response = await app_client.post("/v1/deletions", json=body, headers=alice)
    problem = assert_problem(response, 422)
    assert problem["errors"] == [{"pointer": "#/partitions", "detail": "more than 10000 partitions"}]


async def test_many_errors_are_capped(app_client: httpx.AsyncClient, alice: dict[str, str]) -> None:
    body = deletion_body(*((f"{MARKER}!", i, 1) for i in range(5_000)))
    response = await app_client.post("/v1/deletions", json=body, headers=alice)
    problem = assert_problem(response, 422)
    assert len(problem["errors"]) == 50
    assert problem["error_count"] == 5_000
    assert len(response.content) < 16_000
    assert MARKER not in response.text


async def test_unknown_cluster_is_404(app_client: httpx.AsyncClient, alice: dict[str, str]) -> None:
    body = deletion_body(("orders", 0, 1), cluster="nowhere")
    problem = assert_problem(await app_client.post("/v1/deletions", json=body, headers=alice), 404)
    assert "nowhere" in problem["detail"]
    await _assert_nothing_stored(app_client, alice)


async def test_bad_idempotency_key_is_422(app_client: httpx.AsyncClient, alice: dict[str, str]) -> None:
    body = deletion_body(("orders", 0, 1))
    for key in ("x" * 256, "with space", ""):
        response = await app_client.post(
            "/v1/deletions", json=body, headers={**alice, "Idempotency-Key": key}
        )
        problem = assert_problem(response, 422)
        assert problem["errors"][0]["parameter"] == "Idempotency-Key", key


async def test_query_parameters_are_validated(app_client: httpx.AsyncClient, alice: dict[str, str]) -> None:
    for query in (
        "limit=0",
        "limit=1.5",
        "limit=1001",
        "status=done",
        "cursor=%21%21",
        "topic=..",
        "cursor=WzFd",
    ):
        problem = assert_problem(await app_client.get(f"/v1/deletions?{query}", headers=alice), 422)
        assert problem["errors"][0]["parameter"] in {"limit", "status", "cursor", "topic"}, query
