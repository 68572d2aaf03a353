"""Make audit_event append-only in the database itself: UPDATE, DELETE (and TRUNCATE) raise.

The hash chain detects tampering; these triggers stop the application's own database role from
doing it by mistake or through a bug. A database owner can still drop them, which the chain then
reveals. SQLite batch operations recreate tables without their triggers: a later migration that
batch-alters audit_event must create them again.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MESSAGE = "audit_event is append-only"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION audit_event_append_only() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN RAISE EXCEPTION '{MESSAGE}'; END $$"
        )
        op.execute(
            "CREATE TRIGGER audit_event_append_only BEFORE UPDATE OR DELETE ON audit_event "
            "FOR EACH ROW EXECUTE FUNCTION audit_event_append_only()"
        )
        op.execute(
            "CREATE TRIGGER audit_event_no_truncate BEFORE TRUNCATE ON audit_event "
            "FOR EACH STATEMENT EXECUTE FUNCTION audit_event_append_only()"
        )
        return
    for verb in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER audit_event_no_{verb.lower()} BEFORE {verb} ON audit_event "
            f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER audit_event_no_truncate ON audit_event")
        op.execute("DROP TRIGGER audit_event_append_only ON audit_event")
        op.execute("DROP FUNCTION audit_event_append_only()")
        return
    op.execute("DROP TRIGGER audit_event_no_delete")
    op.execute("DROP TRIGGER audit_event_no_update")
