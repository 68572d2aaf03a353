"""The OpenAPI document's post-processing: error responses filed under application/problem+json, what
the service refuses in requests beyond what the models write (``app.api.openapi_constraints``), and the
configured limits a request body must keep (``PURGE_LIMITS_*``), so the document a service serves says
its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from app.api.openapi_constraints import describe_constraints
from app.api.problems import PROBLEM_MEDIA_TYPE
from app.settings import LimitSettings

JSON_MEDIA_TYPE = "application/json"


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
