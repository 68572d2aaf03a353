"""The OpenAPI document's post-processing, so the document a service serves says its own: error responses
filed under application/problem+json, the configured limits a request body must keep
(``PURGE_LIMITS_*``), and what the service refuses in requests beyond what pydantic and FastAPI write:

- Control characters: ``app.text`` refuses them in every parameter and in JSON bodies (tab, line feed
  and carriage return aside), before any model sees the request; every request string without a
  format or enum says so with a pattern (beside its own pattern, under ``allOf``, when it has one).
- 64-bit bounds: FastAPI's document model holds ``minimum``/``maximum`` as floats, so ``2**63 - 1``
  reads ``9.223372036854776e18`` (``2**63``, one past the bound); integer bounds are written back as
  integers, that one as ``2**63 - 1``.
- Maps with constrained keys (``dict[TopicName, ...]``): pydantic writes ``patternProperties`` but
  refuses every other key too; the document says so with ``additionalProperties: false``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI

from app.api.problems import PROBLEM_MEDIA_TYPE
from app.settings import LimitSettings

JSON_MEDIA_TYPE = "application/json"
NO_CONTROL_IN_PARAMETERS = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"
NO_CONTROL_IN_BODIES = "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]*$"
INT64_MAX = 2**63 - 1
_REF_PREFIX = "#/components/schemas/"


def file_problems_as_problem_json(schema: dict[str, Any]) -> dict[str, Any]:
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            for status, response in operation.get("responses", {}).items():
                content = response.get("content", {})
                if status.isdigit() and int(status) >= 400 and JSON_MEDIA_TYPE in content:
                    ref = content[JSON_MEDIA_TYPE].get("schema", {}).get("$ref", "")
                    if ref.endswith("/Problem"):
                        content[PROBLEM_MEDIA_TYPE] = content.pop(JSON_MEDIA_TYPE)
    return schema


def describe_limits(schema: dict[str, Any], limits: LimitSettings) -> dict[str, Any]:
    """A deletion's ``timeout_ms`` at most ``PURGE_LIMITS_MAX_TIMEOUT_MS``, its entries at most
    ``PURGE_LIMITS_MAX_PARTITIONS``."""
    properties = (
        schema.get("components", {}).get("schemas", {}).get("DeletionCreate", {}).get("properties", {})
    )
    if "partitions" in properties:
        properties["partitions"]["maxItems"] = limits.max_partitions
    for choice in properties.get("timeout_ms", {}).get("anyOf", []):
        if choice.get("type") == "integer":
            choice["maximum"] = min(choice.get("maximum", limits.max_timeout_ms), limits.max_timeout_ms)
    return schema


def install_openapi(app: FastAPI, limits: LimitSettings) -> None:
    """Wrap whatever builds the document now (auth may have replaced it) with the post-processing."""
    build: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        if getattr(app.state, "openapi_done", False) and app.openapi_schema is not None:
            return app.openapi_schema
        schema = describe_limits(describe_constraints(file_problems_as_problem_json(build())), limits)
        app.openapi_schema = schema
        app.state.openapi_done = True
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def describe_constraints(schema: dict[str, Any]) -> dict[str, Any]:
    components = schema.get("components", {}).get("schemas", {})
    bodies: list[Any] = []
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            for parameter in operation.get("parameters", []):
                _constrain(parameter.get("schema", {}), NO_CONTROL_IN_PARAMETERS, components, set())
            for media in operation.get("requestBody", {}).get("content", {}).values():
                bodies.append(media.get("schema", {}))
    seen: set[str] = set()
    for body in bodies:
        _constrain(body, NO_CONTROL_IN_BODIES, components, seen)
    for node in _nodes(schema):
        if node.get("type") == "integer":
            for bound in ("minimum", "maximum"):
                if isinstance(node.get(bound), float):
                    node[bound] = min(int(node[bound]), INT64_MAX)
        if "patternProperties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
    return schema


def _constrain(node: Any, pattern: str, components: dict[str, Any], seen: set[str]) -> None:
    """Give every string schema under ``node`` (following ``$ref`` once each) ``pattern``."""
    for item in _nodes(node):
        ref = item.get("$ref", "")
        if ref.startswith(_REF_PREFIX) and ref not in seen:
            seen.add(ref)
            _constrain(components.get(ref.removeprefix(_REF_PREFIX), {}), pattern, components, seen)
        if item.get("type") != "string" or any(key in item for key in ("format", "enum", "const")):
            continue
        if "pattern" not in item:
            item["pattern"] = pattern
        elif item["pattern"] != pattern and {"pattern": pattern} not in item.get("allOf", []):
            item.setdefault("allOf", []).append({"pattern": pattern})


def _nodes(node: Any) -> Iterator[dict[str, Any]]:
    """Every object in a JSON value, depth first."""
    pending = [node]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            yield item
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
