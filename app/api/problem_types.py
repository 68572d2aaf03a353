"""Every problem ``type`` the service answers with, and what its page at ``/problems/{slug}`` says.

A problem's ``type`` is the relative URL ``/problems/<slug>`` (RFC 9457 §3.1.1 allows a relative URI
reference, resolved against the request's URL): it names the same problem whatever host or port the
service is reached at, and opening it shows this explanation.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.errors import type_url


@dataclass(frozen=True)
class ProblemType:
    slug: str
    status: int
    title: str
    meaning: str
    remedy: str

    @property
    def url(self) -> str:
        return type_url(self.slug)


_TYPES = (
    ProblemType(
        "malformed-request",
        400,
        "Malformed request",
        "The request could not be read: a header such as Content-Length is not valid.",
        "Send a well-formed HTTP request; HTTP client libraries do this for you.",
    ),
    ProblemType(
        "bad-request",
        400,
        "Bad Request",
        "The request could not be read as HTTP the service understands.",
        "Check the request line, headers and body encoding your client sends.",
    ),
    ProblemType(
        "not-authenticated",
        401,
        "Authentication required",
        "The request carries no bearer token, or its token is malformed, expired, not signed by the "
        "configured issuer, or meant for another audience. The WWW-Authenticate header says which.",
        "Get an access token from the issuer (in the demo: POST /oauth/token with a client id and secret, "
        "or Authorize in /docs) and send it as 'Authorization: Bearer <token>'. Get a new one when it "
        "expires.",
    ),
    ProblemType(
        "forbidden",
        403,
        "Not allowed",
        "You are authenticated, but Kafka's ACL semantics (KIP-11) do not allow what you asked: the "
        "detail names the operation and the resources that were denied. A DENY binding beats every "
        "ALLOW (a topic under legal hold). The refusal is in the audit trail as authz.denied.",
        "Ask an operator for the binding you need (POST /v1/clusters/{cluster}/acls, e.g. DELETE on the "
        "topic), or leave the denied topics out of the request. Nothing of a refused request was done.",
    ),
    ProblemType(
        "checkpoint-location-refused",
        403,
        "Checkpoint location not allowed",
        "The operator does not let the service read this checkpoint_location: it is outside every "
        "root in PURGE_SPARK_CHECKPOINT_ROOTS (symlinks followed), or no root is configured (pull mode "
        "is off). The request itself is well formed; the operator's configuration refuses it.",
        "Register the consumer without checkpoint_location and report progress with the Spark listener "
        "(push mode), or ask the operator to add a root that covers the location.",
    ),
    ProblemType(
        "not-found",
        404,
        "Not found",
        "There is no such resource, or you may not see it: a deletion, consumer or policy you are not "
        "allowed to describe answers 404, as if it did not exist. An unknown cluster is a 404 too.",
        "Check the id or name (and the cluster name); list what you may see with the matching GET "
        "collection, or ask for DESCRIBE on the resource.",
    ),
    ProblemType(
        "cluster-not-found",
        404,
        "Cluster not found",
        "The request names a Kafka cluster the service is not configured for (PURGE_CLUSTERS), in its "
        "path or its body; the detail names it.",
        "Use a configured cluster's name (the demo's is demo); the operator adds clusters.",
    ),
    ProblemType(
        "topic-not-found",
        404,
        "Topic or partition not found",
        "The request names topics or partitions the cluster does not have: errors[] points at each entry "
        "and names its topic and partition. Nothing was accepted.",
        "Check the topic names and partition numbers, or leave the partition out to mean every partition "
        "of the topic.",
    ),
    ProblemType(
        "connect-cluster-not-found",
        404,
        "Kafka Connect cluster not found",
        "The policy names a Kafka Connect cluster the service is not configured for (PURGE_CONNECT), or "
        "one that reads from another Kafka cluster; the detail names it.",
        "Use a Connect cluster the operator configured for this Kafka cluster, or ask for one.",
    ),
    ProblemType(
        "method-not-allowed",
        405,
        "Method Not Allowed",
        "The path exists but does not take this HTTP method.",
        "See /docs for the methods each path takes.",
    ),
    ProblemType(
        "request-timeout",
        408,
        "Request Timeout",
        "The client took too long to send the request's body (PURGE_LIMITS_BODY_TIMEOUT_SECONDS), or, "
        "answered by the reverse proxy in front, its headers; the connection was closed.",
        "Send the whole request at once; a slow network or a stalled client causes this. Retry it.",
    ),
    ProblemType(
        "conflict",
        409,
        "Conflict with current state",
        "The request clashes with what exists now: a deletion would remove records some consumer group "
        "has not read yet (the groups are listed), the resource already exists, the deletion has no "
        "pending partition left to cancel, the cluster's ACLs are read from Kafka and cannot be changed "
        "here, or a checkpoint was given but no signing key is configured.",
        "Read the detail. For unread records: preview with dry_run true, wait until the groups caught "
        "up, name them in ignore_groups, or set allow_unconsumed true (audited). For an existing "
        "resource: read or change it instead of creating it again.",
    ),
    ProblemType(
        "offset-out-of-range",
        409,
        "Offset above the high watermark",
        "An offset is above its partition's high watermark now: those records do not exist yet, and "
        "Kafka would refuse the deletion with OFFSET_OUT_OF_RANGE. errors[] points at each entry with "
        "its high watermark; high_watermarks lists them. Nothing was accepted.",
        "Use an offset at or below the high watermark, or -1 (or to: end) for every record there now.",
    ),
    ProblemType(
        "approval-not-required",
        409,
        "No approval is needed",
        "The deletion or retention policy exists, but no approval rule protected it when it was made: it "
        "has no approval request to read or decide.",
        "Nothing to do: it runs without approval. GET the deletion or policy itself to follow it.",
    ),
    ProblemType(
        "payload-too-large",
        413,
        "Request body too large",
        "The body is over the configured limit (PURGE_LIMITS_MAX_BODY_BYTES, 1 MiB by default); it was "
        "refused before it was read.",
        "Split the request: for example one deletion per topic, or fewer partitions per request.",
    ),
    ProblemType(
        "unsupported-media-type",
        415,
        "Unsupported media type",
        "The body is not sent as application/json.",
        "Send 'Content-Type: application/json' with a JSON body.",
    ),
    ProblemType(
        "validation-failed",
        422,
        "Request is not valid",
        "The request parsed but breaks a rule: errors[] names each field by JSON pointer into the body "
        "(#/partitions/0/offset) or each query, path or header parameter by name, with what is wrong. "
        "Examples: two offset specs in one entry, a topic name Kafka would refuse, a time without an "
        "offset, a cursor this service did not return.",
        "Fix the fields errors[] names and send the request again; /docs shows every field's rules "
        "and examples.",
    ),
    ProblemType(
        "idempotency-key-reused",
        422,
        "Idempotency-Key was used with a different request",
        "You sent an Idempotency-Key you used before, with a different request body. A repeat of the "
        "same request with the same key answers the deletion first created.",
        "Use a new key (e.g. a fresh UUID) for each distinct request, and the same key only to retry "
        "exactly the same request.",
    ),
    ProblemType(
        "internal-error",
        500,
        "Internal server error",
        "The service failed while handling the request; the response says nothing about why, on purpose.",
        "Retry later. If it persists, give the operator the request_id of the response: the service's "
        "log has the error under that id.",
    ),
    ProblemType(
        "service-unavailable",
        503,
        "Service unavailable",
        "A dependency cannot be reached now: the database, or the Kafka cluster (its brokers, or the "
        "leader of a partition). Nothing was changed.",
        "Retry after the Retry-After header's seconds. GET /readyz shows which dependency is down.",
    ),
    ProblemType(
        "database-unavailable",
        503,
        "Database unavailable",
        "The service's database cannot be used now: its connections were lost or cannot be opened, "
        "or it refuses work (shutting down, too many connections). A request cut before anything was "
        "committed is run again first; this answer means it could not be, or its outcome is unknown.",
        "Retry after the Retry-After header's seconds; with an Idempotency-Key a POST /v1/deletions "
        "retried answers with the deletion if the first attempt stored it. GET /readyz shows the "
        "database's state.",
    ),
    ProblemType(
        "audit-chain-broken",
        503,
        "The audit chain is broken",
        "The audit trail holds rows this service did not write where its next event must go (or its "
        "head row is missing): someone changed the audit tables. Every change needs its audit event, "
        "so the service changes nothing until this is resolved.",
        "Tell the operator: GET /v1/audit/verify names the first broken event. Restore the audit "
        "tables from a backup and verify them against a checkpoint kept outside the database.",
    ),
)
PROBLEM_TYPES: dict[str, ProblemType] = {problem.slug: problem for problem in _TYPES}
