"""The audit trail: append-only, hash-chained events written in the same transaction as the change.

``hash = SHA-256(prev_hash + canonical_json(content))`` where content is the event's id, occurred_at,
principal, client_host, request_id, action, cluster, deletion_id and details. The first event's
prev_hash is 64 zeros. Signed checkpoints (``app.audit.checkpoints``) pin the chain's head at times, so
that a copy kept outside the database reveals a rewrite or a truncation (``app.audit.verify``).
"""

from app.audit import events
from app.audit.chain import (
    GENESIS_HASH,
    NewEvent,
    append_event,
    append_events,
    canonical_json,
    canonical_object,
    chain_hash,
    event_content,
    rendered,
    rfc3339,
)
from app.audit.checkpoints import Checkpoint, CheckpointKey, load_checkpoint_key
from app.audit.verify import VerifyResult, verify_chain

__all__ = [
    "GENESIS_HASH",
    "Checkpoint",
    "CheckpointKey",
    "NewEvent",
    "VerifyResult",
    "append_event",
    "append_events",
    "canonical_json",
    "canonical_object",
    "chain_hash",
    "event_content",
    "events",
    "load_checkpoint_key",
    "rendered",
    "rfc3339",
    "verify_chain",
]
