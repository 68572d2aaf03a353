"""Every property of every schema and every parameter of the OpenAPI document says what it is: the
committed document (``python -m app.openapi``) and the one a dev-issuer service (the demo) serves."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from app.main import create_app
from app.openapi import document
from app.settings import AuthSettings, Settings


def dev_issuer_document() -> dict[str, Any]:
    settings = Settings(auth=AuthSettings(dev_issuer=True, dev_clients={"admin": SecretStr("secret")}))
    schema: dict[str, Any] = create_app(settings, run_executor=False).openapi()
    return schema


COMBINATORS = {"oneOf", "anyOf", "allOf", "not", "if", "then", "else"}


def undescribed(node: Any, where: str, *, constraint: bool = False) -> Iterator[str]:
    """Where a property or a parameter without a description sits, anywhere under ``node``. Properties
    inside ``oneOf``/``anyOf``/``allOf``/``not`` and ``if``/``then``/``else`` only constrain ones the
    schema declares (and describes)."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from undescribed(item, f"{where}/{index}", constraint=constraint)
        return
    if not isinstance(node, dict):
        return
    for name, prop in (node.get("properties") or {}).items() if not constraint else ():
        if not (isinstance(prop, dict) and prop.get("description")):
            yield f"{where}/properties/{name}"
    for param in node.get("parameters") or []:
        if "$ref" not in param and not param.get("description"):
            yield f"{where}: parameter {param.get('in')} {param.get('name')}"
    for key, value in node.items():
        yield from undescribed(value, f"{where}/{key}", constraint=constraint or key in COMBINATORS)


@pytest.mark.parametrize(
    "schema",
    [json.loads(document()), dev_issuer_document()],
    ids=["committed document", "dev issuer document"],
)
def test_every_property_and_parameter_has_a_description(schema: dict[str, Any]) -> None:
    missing = sorted(set(undescribed(schema, "#")))
    assert missing == [], "without a description:\n" + "\n".join(missing)


def test_the_walk_finds_what_lacks_a_description() -> None:
    schema = {
        "paths": {"/x": {"get": {"parameters": [{"in": "query", "name": "q"}]}}},
        "components": {"schemas": {"A": {"properties": {"b": {"type": "string"}}}}},
    }
    assert sorted(undescribed(schema, "#")) == [
        "#/components/schemas/A/properties/b",
        "#/paths//x/get: parameter query q",
    ]
