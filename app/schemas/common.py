"""Schemas shared by every resource: the problem document and error-response declarations."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from pydantic import BaseModel, Field


class ProblemFieldError(BaseModel):
    pointer: str | None = Field(default=None, description="JSON pointer into the body, e.g. #/partitions/0")
    parameter: str | None = Field(default=None, description="Name of the query, path or header parameter")
    in_: str | None = Field(
        default=None, alias="in", description="Where the parameter is: query, path, header"
    )
    detail: str = Field(description="What is wrong there")


class Problem(BaseModel):
    """RFC 9457 problem details."""

    type: str = Field(
        description="The problem type: the relative URL /problems/<slug> of a page that explains it and "
        "says what to do"
    )
    title: str = Field(description="The problem type's short summary, the same for every occurrence")
    status: int = Field(description="The HTTP status code")
    detail: str | None = Field(default=None, description="What happened to this request")
    instance: str | None = Field(default=None, description="The request's path")
    request_id: str | None = Field(
        default=None, description="The request's X-Request-ID: quote it to find the request in the logs"
    )
    errors: list[ProblemFieldError] | None = Field(
        default=None, description="For 422: each invalid field or parameter (at most 50)"
    )


_DESCRIPTIONS = {
    400: "Malformed request",
    401: "Missing or invalid bearer token (WWW-Authenticate: Bearer)",
    403: "Authenticated but not allowed",
    404: "Not found, or not visible to the caller",
    409: "Conflicts with the current state",
    413: "Request body over the size limit",
    415: "Body is not application/json",
    422: "Invalid request; errors[] names each field by JSON pointer",
    503: "A dependency (database or Kafka cluster) is unavailable; retry later",
}


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route: each status documented with the Problem schema (the OpenAPI
    post-processing in ``app.openapi`` files them under application/problem+json)."""
    return {status: {"model": Problem, "description": _DESCRIPTIONS[status]} for status in statuses}


AUTHENTICATED = (401, 422)


# The settings may lower the page size limit, never raise it past this documented bound.
MAX_PAGE_SIZE = 1000
PageLimit = Annotated[
    int | None, Query(ge=1, le=MAX_PAGE_SIZE, description="Page size (default from settings)")
]
