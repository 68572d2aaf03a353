"""Every route that can reach the database answers its faults as 503 ``database-unavailable``: each is a
``DatabaseRoute`` (``app.api.routing``), so a router added without it fails here, and the OpenAPI
document lists the 503 on each of their operations."""

from __future__ import annotations

import importlib
import json
import pkgutil

from fastapi import APIRouter

from app.api import routers
from app.api.routing import DatabaseRoute
from app.openapi import document

# Operations that never touch the database: the token issuer and its keys, liveness.
WITHOUT_DATABASE = {"/oauth/token", "/.well-known/jwks.json", "/healthz"}


def test_every_router_of_the_api_uses_database_routes() -> None:
    modules = [
        importlib.import_module(f"{routers.__name__}.{m.name}")
        for m in pkgutil.iter_modules(routers.__path__)
    ]
    routes = [route for module in modules for route in getattr(module, "router", APIRouter()).routes]
    assert len(routes) > 30
    assert [route for route in routes if not isinstance(route, DatabaseRoute)] == []


def test_every_operation_that_uses_the_database_documents_503() -> None:
    paths = json.loads(document())["paths"]
    missing = [
        f"{method} {path}"
        for path, operations in paths.items()
        if path not in WITHOUT_DATABASE
        for method, operation in operations.items()
        if "503" not in operation["responses"]
    ]
    assert missing == []
