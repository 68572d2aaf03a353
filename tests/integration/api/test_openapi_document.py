"""The committed OpenAPI document matches the app, and every route documents itself and its errors."""

from __future__ import annotations

import json
from pathlib import Path

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
