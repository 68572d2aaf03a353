"""The committed OpenAPI document matches the app, and every route documents itself and its errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from app.openapi import document

COMMITTED = Path(__file__).resolve().parents[3] / "openapi" / "openapi.json"
UNAUTHENTICATED = {"/healthz", "/readyz", "/metrics", "/signing-keys"}


def test_committed_document_is_current() -> None:
    assert COMMITTED.read_text() == document(), "openapi/openapi.json is out of date: run 'make openapi'"


def test_every_operation_has_a_description_and_declares_its_errors() -> None:
    schema = json.loads(document())
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert operation.get("description"), f"{method} {path} has no docstring"
            if path in UNAUTHENTICATED:
                continue
            assert operation.get("security"), f"{method} {path} is not authenticated"
            responses = operation["responses"]
            assert "401" in responses, f"{method} {path} does not declare 401"
            for status, response in responses.items():
                if int(status) >= 400:
                    assert list(response["content"]) == ["application/problem+json"], (method, path, status)


HTTP_METHODS = ("GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE")


@pytest.mark.parametrize("run_executor", [False])
async def test_a_405_allows_exactly_the_documented_methods(
    app_client: httpx.AsyncClient, alice: dict[str, str]
) -> None:
    """RFC 9110 §15.5.6: a 405 carries ``Allow``, here every method the document lists for the path (a path
    served by one route per method included)."""
    schema = (await app_client.get("/openapi.json")).json()
    wrong: list[str] = []
    for template, operations in schema["paths"].items():
        documented = sorted(method.upper() for method in operations if method.upper() in HTTP_METHODS)
        path = re.sub(r"\{[^}]+\}", "x1", template).replace("/clusters/x1/", "/clusters/demo/")
        for method in sorted(set(HTTP_METHODS) - set(documented)):
            answer = await app_client.request(method, path, headers=alice)
            allow = sorted(m.strip() for m in answer.headers.get("allow", "").split(",") if m.strip())
            if answer.status_code != 405 or allow != documented:
                wrong.append(
                    f"{method} {template}: {answer.status_code}, Allow {allow}, documented {documented}"
                )
    assert not wrong, "\n".join(wrong)
