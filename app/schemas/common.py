"""Schemas shared by every resource: the problem document and error-response declarations."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from pydantic import BaseModel, Field

from app.errors import (
    Conflict,
    Forbidden,
    MalformedRequest,
    NotAuthenticated,
    NotFound,
    PayloadTooLarge,
    PurgeError,
    ServiceUnavailable,
    UnsupportedMediaType,
    ValidationFailed,
    type_url,
)


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


def _example(error: type[PurgeError], detail: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": type_url(error.slug),
        "title": error.title,
        "status": error.status,
        "detail": detail,
        "instance": "/v1/deletions",
        "request_id": "6f1c2a9e8b7d4c3f",
        **extra,
    }


# What each status looks like, in the demo's terms.
_EXAMPLES = {
    400: _example(MalformedRequest, "Bad Content-Length"),
    401: _example(NotAuthenticated, "The bearer token has expired."),
    403: _example(
        Forbidden,
        "User:orders-team from 127.0.0.1 may not DELETE on topic(s): orders.audit.",
        denied_operation="DELETE",
        denied_resource_type="TOPIC",
        denied_resources=["orders.audit"],
        denied_count=1,
    ),
    404: _example(NotFound, "No deletion '5b0e3f8e-2c4d-4a51-9d8e-0f6a7b1c2d3e'."),
    409: _example(
        Conflict,
        "The deletion would remove records 1 consumer group(s) have not read yet: orders-billing (50 "
        'records). Set "allow_unconsumed": true or list the groups in "ignore_groups" to proceed.',
        groups=[{"group": "orders-billing", "unread_records": 50, "partitions": 1}],
    ),
    413: _example(PayloadTooLarge, "The request body is larger than 1048576 bytes."),
    415: _example(UnsupportedMediaType, "Send the body as application/json."),
    422: _example(
        ValidationFailed,
        "The request has invalid fields; see errors.",
        errors=[
            {
                "pointer": "#/partitions/0",
                "detail": "Value error, exactly one of offset, before, committed_by, to is required, got 2",
            }
        ],
    ),
    503: _example(ServiceUnavailable, "Kafka cluster demo cannot be reached; retry later."),
}


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route: each status documented with the Problem schema and an example (the
    OpenAPI post-processing in ``app.api.openapi_document`` files them under application/problem+json)."""
    return {
        status: {
            "model": Problem,
            "description": _DESCRIPTIONS[status],
            "content": {"application/json": {"example": _EXAMPLES[status]}},
        }
        for status in statuses
    }


AUTHENTICATED = (401, 422)


# The settings may lower the page size limit, never raise it past this documented bound.
MAX_PAGE_SIZE = 1000
PageLimit = Annotated[
    int | None, Query(ge=1, le=MAX_PAGE_SIZE, description="Page size (default from settings)")
]
