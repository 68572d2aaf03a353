"""Audit tamper evidence: only the next link of the chain may be inserted, and signed checkpoints.

A row-level BEFORE INSERT trigger refuses an ``audit_event`` that is not the next link: its id must be
the newest row's plus one (1 on an empty table), must not pass the head's ``last_event_id`` (appends
move the head first), and its ``prev_hash`` must be the newest row's hash (the genesis hash for id 1).
Each check is a primary-key lookup: the newest row is read by a backward scan of the key, a plan that
holds whatever the table's statistics (a range condition on a parameter, in the function's cached
generic plan, may be planned as a scan of the whole table). On PostgreSQL a row-level trigger sees the
rows inserted before it by the same statement, so one INSERT of many events passes link by link. A
database owner can still drop the trigger; the chain's verification and the signed checkpoints are
what reveal tampering then.

``audit_checkpoint`` keeps the signed checkpoints (a JWS over the head's event id and hash and the time);
one per event id.

Revision ID: 0009_audit_tamper_evidence
Revises: 0008_audit_details_lz4
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_audit_tamper_evidence"
down_revision: str | None = "0008_audit_details_lz4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
# The genesis hash (64 zeros) is written out in both statements: the previous hash of event 1.

POSTGRESQL_FUNCTION = """
CREATE FUNCTION audit_event_next_link() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    newest_id bigint;
    newest_hash text;
BEGIN
    -- The newest row, by a backward scan of the primary key (a plan that holds without statistics).
    SELECT id, hash INTO newest_id, newest_hash FROM audit_event ORDER BY id DESC LIMIT 1;
    IF NEW.id IS NULL OR NEW.id < 1 OR NEW.id <> COALESCE(newest_id, 0) + 1
        OR NEW.id > COALESCE((SELECT last_event_id FROM audit_head WHERE id = 1), 0) THEN
        RAISE EXCEPTION 'audit_event accepts only the next link of the chain: id % is not next', NEW.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NEW.prev_hash IS DISTINCT FROM
        COALESCE(newest_hash, '0000000000000000000000000000000000000000000000000000000000000000') THEN
        RAISE EXCEPTION
            'audit_event accepts only the next link of the chain: prev_hash of id % does not match', NEW.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END $$
"""

SQLITE_TRIGGER = """
CREATE TRIGGER audit_event_next_link BEFORE INSERT ON audit_event
WHEN NEW.id IS NULL OR NEW.id < 1
    OR NEW.id IS NOT COALESCE((SELECT max(id) FROM audit_event), 0) + 1
    OR NEW.id > COALESCE((SELECT last_event_id FROM audit_head WHERE id = 1), 0)
    OR NEW.prev_hash IS NOT CASE WHEN NEW.id = 1
        THEN '0000000000000000000000000000000000000000000000000000000000000000'
        ELSE (SELECT hash FROM audit_event WHERE id = NEW.id - 1) END
BEGIN SELECT RAISE(ABORT, 'audit_event accepts only the next link of the chain'); END
"""


def upgrade() -> None:
    op.create_table(
        "audit_checkpoint",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("event_id", sa.BigInteger(), nullable=False),
        sa.Column("event_hash", sa.String(64), nullable=False),
        sa.Column("signed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("key_id", sa.String(128), nullable=False),
        sa.Column("jws", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_checkpoint")),
        sa.UniqueConstraint("event_id", name=op.f("uq_audit_checkpoint_event_id")),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(POSTGRESQL_FUNCTION)
        op.execute(
            "CREATE TRIGGER audit_event_next_link BEFORE INSERT ON audit_event "
            "FOR EACH ROW EXECUTE FUNCTION audit_event_next_link()"
        )
    else:
        op.execute(SQLITE_TRIGGER)


def downgrade() -> None:
    op.execute("DROP TRIGGER audit_event_next_link" + (" ON audit_event" if _postgresql() else ""))
    if _postgresql():
        op.execute("DROP FUNCTION audit_event_next_link()")
    op.drop_table("audit_checkpoint")


def _postgresql() -> bool:
    return op.get_bind().dialect.name == "postgresql"
