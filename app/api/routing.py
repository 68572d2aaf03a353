"""What every router builds on: its route classes and the dependencies its endpoints take.

``DatabaseRoute``, the route class of every route that uses the database: a database fault answers 503
``database-unavailable`` (with Retry-After), never a 500. A request cut by a database outage
(``app.adapters.db.faults``: a lost or refused connection, a terminated backend, an exhausted pool)
before any of its units of work reached COMMIT changed nothing, so it runs once more, at most
``ATTEMPTS`` times in all, on connections the pool has pinged or opened anew. A request whose work
reached COMMIT is never run again: its outcome may be stored, and running it again could store it twice;
it answers 503 then, as does one whose attempts all failed. A client retry of ``POST /v1/deletions``
with its ``Idempotency-Key`` answers with the deletion if it was stored.

``StrictJsonRoute``, a ``DatabaseRoute`` whose JSON bodies are parsed strictly, before pydantic sees
them. Python's ``json`` accepts ``NaN``/``Infinity``, turns ``1e400`` into ``inf`` and keeps the last of
duplicate keys; all of these are refused here (422 via FastAPI's ``json_invalid`` path), as are bodies
that are not UTF-8 or not JSON media types (415). A number with a zero fraction (``393.0``) is the
integer JSON Schema counts it as (``_number``). A string holding a control character (``app.text``) is
a 422 naming it by JSON pointer.

The dependencies are small Annotated aliases: the runtime, the request id, the authorization. Routers
open no database session: the services do.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Callable, Coroutine
from decimal import Decimal
from typing import Annotated, Any

from fastapi import Depends, Request, Response
from fastapi.routing import APIRoute
from starlette.requests import ClientDisconnect

from app.adapters.db.faults import fault_name, is_outage, recorded_commits
from app.auth import PrincipalDep
from app.auth.permissions import KafkaAclAuthorization
from app.errors import DatabaseUnavailable, FieldError, UnsupportedMediaType, ValidationFailed
from app.schemas.common import problem_responses
from app.services.runtime import Runtime
from app.text import CONTROL_CHARACTER_DETAIL, control_character_pointer

__all__ = ["AuthorizationDep", "PrincipalDep", "RequestIdDep", "RuntimeDep"]

ATTEMPTS = 5
PAUSE_SECONDS = 0.05  # before the next attempt, times the attempts so far: the server may be restarting
log = logging.getLogger("kafka_purge.api")

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class DatabaseRoute(APIRoute):
    """A route whose database faults answer 503 (and whose document says so)."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        kwargs["responses"] = {**problem_responses(503), **(kwargs.get("responses") or {})}
        super().__init__(path, endpoint, **kwargs)

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()

        async def database_handler(request: Request) -> Response:
            await request.body()  # kept by the request, for another attempt
            for attempt in range(1, ATTEMPTS + 1):
                with recorded_commits() as commits:
                    try:
                        return await handler(request)
                    except Exception as exc:
                        if not is_outage(exc):
                            raise
                        fault = exc
                if commits.reached or attempt == ATTEMPTS:
                    break
                log.warning("database fault (%s); running the request again", fault_name(fault))
                await asyncio.sleep(PAUSE_SECONDS * attempt)
            why = "after its work reached COMMIT" if commits.reached else f"in {attempt} attempts"
            log.warning("database fault (%s) %s; answered 503", fault_name(fault), why)
            unknown = " Its outcome is unknown: it may have been stored." if commits.reached else ""
            raise DatabaseUnavailable(f"The database cannot be used right now.{unknown}") from None

        return database_handler


MAX_NESTING_ERROR = "The body is nested too deeply"


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # in C: called for every object of the body (10,000 in a big request)
    if len(result) != len(pairs):
        raise ValueError("duplicate object key")
    return result


# Integral numbers below this become ints; larger ones are out of every integer field's range anyway,
# and are never expanded digit by digit.
EXACT_BELOW = 2**64


def _number(text: str) -> float | int:
    """A JSON number written with a fraction or an exponent: the exact ``int`` when its value is an
    integer (``393.0``, ``1e3``), as JSON Schema counts one, else a finite float.

    So every integer field takes ``393.0`` as 393, while ``393.5``, ``true`` and ``"393"`` stay refused
    (the request models are strict). The value is read from the text, not from the float: an offset
    written ``9007199254740993.0`` stays 9007199254740993, and ``1.0000000000000001`` (1.0 as a float)
    is no integer. Done here, once for every body, rather than by a validator on each integer field:
    pydantic cannot carry a field's bounds through such a validator into the document's ``minimum`` and
    ``maximum`` when the field is optional or inside a list or map."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("number out of range")
    if value.is_integer() and abs(value) < EXACT_BELOW:
        exact = Decimal(text)
        if exact == exact.to_integral_value():
            return int(exact)
    return value


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_strict_json(body: bytes) -> Any:
    """Parse ``body``; every failure is a ``json.JSONDecodeError`` with a message that echoes nothing."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise json.JSONDecodeError("the body is not UTF-8", "", 0) from None
    try:
        return json.loads(
            text,
            object_pairs_hook=_no_duplicate_keys,
            parse_float=_number,
            parse_constant=_reject_constant,
        )
    except json.JSONDecodeError as exc:
        raise json.JSONDecodeError(exc.msg, "", exc.pos) from None
    except RecursionError:
        raise json.JSONDecodeError(MAX_NESTING_ERROR, "", 0) from None
    except ValueError as exc:
        raise json.JSONDecodeError(str(exc), "", 0) from None


def _is_json_media_type(content_type: str | None) -> bool:
    if not content_type:
        return True
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


class StrictJsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = parse_strict_json(await self.body())
        return self._json

    async def check_strings(self) -> None:
        """Refuses a JSON body with a control character in a string. A body that does not parse, or
        whose client went away, is left to FastAPI, which reads it again and reports why."""
        try:
            value = await self.json()
        except (json.JSONDecodeError, ClientDisconnect):
            return
        pointer = control_character_pointer(await self.body(), value)
        if pointer is not None:
            raise ValidationFailed(
                "The body has invalid fields; see errors.",
                errors=[FieldError(pointer, CONTROL_CHARACTER_DETAIL)],
            )


class StrictJsonRoute(DatabaseRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict_handler(request: Request) -> Response:
            if request.method in {"POST", "PUT", "PATCH"} and not _is_json_media_type(
                request.headers.get("content-type")
            ):
                raise UnsupportedMediaType("Send the body as application/json.")
            return await self._handle(handler, StrictJsonRequest(request.scope, request.receive))

        return strict_handler

    async def _handle(
        self, handler: Callable[[Request], Coroutine[Any, Any, Response]], request: StrictJsonRequest
    ) -> Response:
        if self.body_field is not None and request.method in {"POST", "PUT", "PATCH"}:
            await request.check_strings()
        return await handler(request)


# The small dependencies are coroutines on purpose: FastAPI runs a plain ``def`` dependency in a worker
# thread, and that hop cost more than the rest of a GET.
async def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def get_request_id(request: Request) -> str:
    # ``RequestIdMiddleware`` stores it in the scope's state before any route runs.
    return str((request.scope.get("state") or {}).get("request_id") or "")


async def get_authorization(runtime: Annotated[Runtime, Depends(get_runtime)]) -> KafkaAclAuthorization:
    return runtime.authorization


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
RequestIdDep = Annotated[str, Depends(get_request_id)]
AuthorizationDep = Annotated[KafkaAclAuthorization, Depends(get_authorization)]
