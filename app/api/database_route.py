"""The route class of every route that uses the database: a database fault answers 503
``database-unavailable`` (with Retry-After), never a 500.

A request cut by a database outage (``app.adapters.db.faults``: a lost or refused connection, a
terminated backend, an exhausted pool) before any of its units of work reached COMMIT changed nothing,
so it runs once more, at most ``ATTEMPTS`` times in all, on connections the pool has pinged or opened
anew. A request whose work reached COMMIT is never run again: its outcome may be stored, and running it
again could store it twice; it answers 503 then, as does one whose attempts all failed. A client retry
of ``POST /v1/deletions`` with its ``Idempotency-Key`` answers with the deletion if it was stored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from app.adapters.db.faults import fault_name, is_outage, recorded_commits
from app.errors import DatabaseUnavailable
from app.schemas.common import problem_responses

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
