"""The service's error tree. Each class knows its HTTP status and a stable ``type`` slug.

    PurgeError
    ├── ValidationFailed (422)           - input that parsed but breaks a rule; carries JSON-pointer errors
    ├── NotAuthenticated (401)           - missing, malformed, expired or untrusted bearer token
    ├── Forbidden (403)                  - authenticated but not allowed (names what was denied)
    │   └── CheckpointNotAllowed         - a checkpoint the operator does not let the service read
    ├── NotFound (404)                   - unknown resource, or one the caller may not see
    │   ├── ClusterNotFound              - a Kafka cluster that is not configured
    │   ├── TopicNotFound                - topics or partitions the cluster does not have
    │   └── ConnectClusterNotFound       - a Kafka Connect cluster that is not configured
    ├── Conflict (409)                   - the request clashes with current state
    │   ├── OffsetOutOfRange             - offsets above their partition's high watermark
    │   └── ApprovalNotRequired          - a decision on a subject that needs no approval
    ├── IdempotencyMismatch (422)        - same Idempotency-Key, different body
    ├── PayloadTooLarge (413)            - body over the configured limit, refused before parsing
    ├── MalformedRequest (400)           - the HTTP request itself cannot be read (a bad Content-Length)
    ├── UnsupportedMediaType (415)       - a body that is not application/json
    ├── ServiceUnavailable (503)         - a dependency (database, cluster) cannot be reached now
    │   └── DatabaseUnavailable (503)    - the database cannot be used now (``app.api.routing``)
    └── AuditChainBroken (503)           - the audit chain cannot take the next event (tampered with)

API handlers raise these; ``app/api/problems.py`` renders every one as RFC 9457 problem+json.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# A problem's ``type`` is the relative URL of the page the service serves about it (``/problems/{slug}``).
PROBLEMS_PATH = "/problems"


def type_url(slug: str) -> str:
    """The ``type`` member of a problem with this slug."""
    return f"{PROBLEMS_PATH}/{slug}"


@dataclass(frozen=True)
class FieldError:
    """One validation error: a JSON pointer into the request body and what is wrong there."""

    pointer: str
    detail: str


class PurgeError(Exception):
    status: int = 500
    slug: str = "internal-error"
    title: str = "Internal server error"

    def __init__(self, detail: str, *, errors: list[FieldError] | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []
        self.extra = extra


class ValidationFailed(PurgeError):
    status = 422
    slug = "validation-failed"
    title = "Request is not valid"


class NotAuthenticated(PurgeError):
    status = 401
    slug = "not-authenticated"
    title = "Authentication required"


class Forbidden(PurgeError):
    status = 403
    slug = "forbidden"
    title = "Not allowed"


class CheckpointNotAllowed(Forbidden):
    """The operator's ``PURGE_SPARK_CHECKPOINT_ROOTS`` do not admit the location (or name none: pull mode
    is off). A 403, not a 422: the request is well formed, but the operator does not allow the service to
    read there, and the document cannot list the roots."""

    slug = "checkpoint-location-refused"
    title = "Checkpoint location not allowed"


class NotFound(PurgeError):
    status = 404
    slug = "not-found"
    title = "Not found"


class ClusterNotFound(NotFound):
    slug = "cluster-not-found"
    title = "Cluster not found"


class TopicNotFound(NotFound):
    slug = "topic-not-found"
    title = "Topic or partition not found"


class ConnectClusterNotFound(NotFound):
    slug = "connect-cluster-not-found"
    title = "Kafka Connect cluster not found"


class Conflict(PurgeError):
    status = 409
    slug = "conflict"
    title = "Conflict with current state"


class OffsetOutOfRange(Conflict):
    """Offsets above their partition's high watermark now (Kafka would answer OFFSET_OUT_OF_RANGE): the
    records are not there yet. Each refused partition carries the high watermark it was checked against."""

    slug = "offset-out-of-range"
    title = "Offset above the high watermark"


class ApprovalNotRequired(Conflict):
    slug = "approval-not-required"
    title = "No approval is needed"


class IdempotencyMismatch(PurgeError):
    status = 422
    slug = "idempotency-key-reused"
    title = "Idempotency-Key was used with a different request"


class PayloadTooLarge(PurgeError):
    status = 413
    slug = "payload-too-large"
    title = "Request body too large"


class MalformedRequest(PurgeError):
    status = 400
    slug = "malformed-request"
    title = "Malformed request"


class UnsupportedMediaType(PurgeError):
    status = 415
    slug = "unsupported-media-type"
    title = "Unsupported media type"


class ServiceUnavailable(PurgeError):
    status = 503
    slug = "service-unavailable"
    title = "Service unavailable"


class DatabaseUnavailable(ServiceUnavailable):
    slug = "database-unavailable"
    title = "Database unavailable"


class AuditChainBroken(PurgeError):
    """The database holds audit rows the service did not write where the next event must go (or no head
    row): nothing is changed, since every change needs its audit event. ``/v1/audit/verify`` says more."""

    status = 503
    slug = "audit-chain-broken"
    title = "The audit chain is broken"
