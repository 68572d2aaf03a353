"""Audit appends on PostgreSQL in one round trip: the ``audit_append`` function.

An append locks the ``audit_head`` row until its transaction commits, so every appender in every
instance waits for the one before it. Before, the lock was held across three round trips between the
service and the database (move the head; hash in Python, insert the events and store the new head hash;
commit), each also waiting for its turn on the service's busy event loop: under 400 small POSTs/s with
the executor on, a third of the sampled database sessions were waiting for the head. The function moves
the head, chains the events' hashes exactly as ``app.audit.chain.event_hash`` does (SHA-256 of the
previous hash, the content's canonical JSON before its details, the details, ``,"id":``, the id, the
rest: the service renders the pieces before it appends), inserts the events and stores the new head
hash, in one call; the lock is then held for that call and the commit. SQLite, which has one writer at
a time, appends as before.

Revision ID: 0009_audit_append_function
Revises: 0008_audit_details_lz4
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0009_audit_append_function"
down_revision: str | None = "0008_audit_details_lz4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Each statement of a (volatile) PL/pgSQL function takes a new snapshot: under READ COMMITTED the UPDATE
# that waited for the head's lock moves, and returns, the head its predecessor committed.
CREATE = """
CREATE FUNCTION audit_append(
    in_occurred_at timestamptz[], in_principal text[], in_client_host text[], in_request_id text[],
    in_action text[], in_cluster text[], in_deletion_id text[], in_details text[], in_lead text[],
    in_tail text[], OUT first_id bigint, OUT head_hash text, OUT hashes text[]
) LANGUAGE plpgsql AS $$
DECLARE
    events integer := cardinality(in_details);
    prev text;
BEGIN
    UPDATE audit_head SET last_event_id = last_event_id + events WHERE id = 1
        RETURNING last_event_id - events + 1, last_hash INTO first_id, head_hash;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the audit chain has no head row';
    END IF;
    prev := head_hash;
    hashes := array_fill(NULL::text, ARRAY[events]);
    FOR i IN 1..events LOOP
        prev := encode(sha256(convert_to(
            prev || in_lead[i] || in_details[i] || ',"id":' || (first_id + i - 1)::text || in_tail[i],
            'UTF8'
        )), 'hex');
        hashes[i] := prev;
    END LOOP;
    INSERT INTO audit_event
        (id, occurred_at, principal, client_host, request_id, action, cluster, deletion_id, details,
         prev_hash, hash)
    SELECT first_id + item.n - 1, item.occurred_at, item.principal, item.client_host, item.request_id,
           item.action, item.cluster, item.deletion_id, CAST(item.details AS json),
           CASE WHEN item.n = 1 THEN head_hash ELSE hashes[item.n - 1] END, hashes[item.n]
    FROM unnest(in_occurred_at, in_principal, in_client_host, in_request_id, in_action, in_cluster,
                in_deletion_id, in_details)
        WITH ORDINALITY
        AS item(occurred_at, principal, client_host, request_id, action, cluster, deletion_id, details, n);
    UPDATE audit_head SET last_hash = prev WHERE id = 1;
END $$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(CREATE)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "DROP FUNCTION audit_append(timestamptz[], text[], text[], text[], text[], text[], text[],"
            " text[], text[], text[])"
        )
