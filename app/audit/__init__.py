"""The audit trail: append-only, hash-chained events written in the same transaction as the change.

``hash = SHA-256(prev_hash + canonical_json(content))`` where content is the event's id, occurred_at,
principal, client_host, request_id, action, cluster, deletion_id and details. The first event's
prev_hash is 64 zeros.
"""

from app.audit.canonical import GENESIS_HASH, canonical_json, canonical_object, chain_hash, rfc3339
from app.audit.chain import (
    NewEvent,
    VerifyResult,
    append_event,
    append_events,
    event_content,
    rendered,
    verify_chain,
)

__all__ = [
    "GENESIS_HASH",
    "NewEvent",
    "VerifyResult",
    "append_event",
    "append_events",
    "canonical_json",
    "canonical_object",
    "chain_hash",
    "event_content",
    "rendered",
    "rfc3339",
    "verify_chain",
]
