"""RFC 9457 problem+json for every error the API returns: the only exception handlers of the app.

A problem's ``type`` is ``/problems/<slug>``, a page the service serves (``app.api.problem_pages``);
``send_problem`` writes one from an ASGI middleware, before any route runs.
Bodies never echo the request: validation errors carry a JSON pointer (``#/partitions/3/offset``) or
a parameter name and a fixed message, capped at ``MAX_ERRORS`` entries. 500s say nothing internal;
the ``request_id`` member correlates them with the server log.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import MutableMapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse
from starlette.types import Scope, Send

from app.api.problem_types import PROBLEM_TYPES
from app.errors import FieldError, PurgeError, ValidationFailed, type_url

PROBLEM_MEDIA_TYPE = "application/problem+json"
MAX_ERRORS = 50
RETRY_AFTER_SECONDS = "5"
_PARAMETER = re.compile(r"\{[^}/]+\}")
_METHODS = {"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}

log = logging.getLogger("app.api")


def request_id_of(scope: MutableMapping[str, Any]) -> str | None:
    state = scope.get("state") or {}
    value = state.get("request_id")
    return str(value) if value else None


def problem_body(
    *, status: int, slug: str, title: str, detail: str | None, instance: str | None, request_id: str | None
) -> dict[str, Any]:
    body: dict[str, Any] = {"type": type_url(slug), "title": title, "status": status}
    if detail:
        body["detail"] = detail
    if instance:
        body["instance"] = instance
    body["request_id"] = request_id
    return body


async def send_problem(
    scope: Scope,
    send: Send,
    status: int,
    slug: str,
    title: str,
    detail: str,
    errors: list[dict[str, str]] | None = None,
    *,
    close: bool,
) -> None:
    body = problem_body(
        status=status,
        slug=slug,
        title=title,
        detail=detail,
        instance=scope.get("path"),
        request_id=request_id_of(scope),
    )
    if errors is not None:
        body["errors"] = errors
    payload = json.dumps(body).encode()
    headers = [
        (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
        (b"content-length", str(len(payload)).encode()),
    ]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def problem_response(
    request: Request,
    *,
    status: int,
    slug: str,
    title: str,
    detail: str | None = None,
    errors: list[dict[str, str]] | None = None,
    headers: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
) -> JSONResponse:
    body = problem_body(
        status=status,
        slug=slug,
        title=title,
        detail=detail,
        instance=request.url.path,
        request_id=request_id_of(request.scope),
    )
    if errors is not None:
        body["errors"] = errors[:MAX_ERRORS]
        if len(errors) > MAX_ERRORS:
            body["error_count"] = len(errors)
    body.update(extra or {})
    all_headers = dict(headers or {})
    if status == 503:
        all_headers.setdefault("Retry-After", RETRY_AFTER_SECONDS)
    return JSONResponse(body, status_code=status, headers=all_headers, media_type=PROBLEM_MEDIA_TYPE)


def field_error_json(error: FieldError) -> dict[str, str]:
    return {"pointer": error.pointer, "detail": error.detail}


def invalid_parameter(name: str, detail: str, *, location: str = "query") -> ValidationFailed:
    """A 422 naming one query, path or header parameter (rendered as an ``errors[]`` entry)."""
    return ValidationFailed(detail, parameter=name, location=location)


async def handle_purge_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PurgeError)
    headers = getattr(exc, "headers", None)
    extra = dict(exc.extra)
    errors = [field_error_json(e) for e in exc.errors]
    if "parameter" in extra:
        location = str(extra.pop("location", "query"))
        errors.append({"parameter": str(extra.pop("parameter")), "in": location, "detail": exc.detail})
    return problem_response(
        request,
        status=exc.status,
        slug=exc.slug,
        title=exc.title,
        detail=exc.detail,
        errors=errors or None,
        headers=dict(headers) if headers else None,
        extra=extra,
    )


def _validation_error_json(error: Any) -> dict[str, str]:
    loc = [str(part) for part in error.get("loc", ())]
    where = loc[0] if loc else "body"
    if error.get("type") == "json_invalid":
        reason = (error.get("ctx") or {}).get("error", "malformed JSON")
        return {"pointer": "#", "detail": f"The body is not valid JSON: {reason}"}
    message = str(error.get("msg", "invalid value"))
    if where == "body":
        return {"pointer": "#" + "".join("/" + _escape(p) for p in loc[1:]), "detail": message}
    return {"parameter": loc[-1] if len(loc) > 1 else where, "in": where, "detail": message}


def _escape(token: str) -> str:
    """RFC 6901 escaping of one reference token."""
    return token.replace("~", "~0").replace("/", "~1")


async def handle_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [_validation_error_json(e) for e in exc.errors()]
    return problem_response(
        request,
        status=422,
        slug="validation-failed",
        title="Request is not valid",
        detail="The request has invalid fields; see errors.",
        errors=errors,
    )


async def handle_http_exception(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    phrase = HTTPStatus(exc.status_code).phrase
    detail = exc.detail if isinstance(exc.detail, str) and exc.detail != phrase else None
    slug = phrase.lower().replace(" ", "-")
    # One title per type (RFC 9457 §3.1.3): Starlette's 404 reads like the service's own.
    known = PROBLEM_TYPES.get(slug)
    headers = dict(exc.headers) if exc.headers else {}
    if exc.status_code == 405 and (allow := documented_methods(request)) is not None:
        headers["Allow"] = allow
    return problem_response(
        request,
        status=exc.status_code,
        slug=slug,
        title=known.title if known is not None else phrase,
        detail=detail,
        headers=headers,
    )


def documented_methods(request: Request) -> str | None:
    """A 405's ``Allow`` (RFC 9110 §15.5.6): the methods the OpenAPI document lists for the request's path,
    all of them (Starlette names only those of the first route matching the path, and this API serves a
    path with one route per method); None for a path the document does not describe."""
    for template, operations in request.app.openapi().get("paths", {}).items():
        shape = "[^/]+".join(re.escape(piece) for piece in _PARAMETER.split(template))
        if re.fullmatch(shape, request.url.path):
            return ", ".join(sorted(method.upper() for method in operations if method.upper() in _METHODS))
    return None


async def handle_unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled error", exc_info=exc, extra={"request_id": request_id_of(request.scope)})
    return problem_response(
        request,
        status=500,
        slug="internal-error",
        title="Internal server error",
        detail="The server could not complete the request; quote the request_id when reporting it.",
    )


def install_problem_handlers(app: FastAPI) -> None:
    app.add_exception_handler(PurgeError, handle_purge_error)
    app.add_exception_handler(RequestValidationError, handle_validation_error)
    app.add_exception_handler(StarletteHTTPException, handle_http_exception)
    app.add_exception_handler(Exception, handle_unexpected)
